declare namespace output {
	function count(input?: Record<string, never>): Promise<count.Output>;
	namespace count {
		interface Output {
			/** @integer */ count: number;
		}
	}
	/** Weather for a city. */
	function getWeather(input: { city: string }): Promise<getWeather.Output>;
	namespace getWeather {
		interface Output {
			/** Degrees Celsius. */ temperature: number;
			conditions: "sunny" | "cloudy" | "rain";
			forecast?: Day[];
		}
		interface Day {
			/** @format date */ date: string;
			high?: number;
		}
	}
}
