declare namespace arrays {
	function lists(input?: {
		tags?: string[];
		untyped?: unknown[];
		unions?: (string | number)[];
		matrix?: number[][];
		objects?: { id: string }[];
		documented_items?: (/** A label name */ string)[];
	}): Promise<ToolResult>;
	function tuples(input: {
		/** @minItems 2 */ point: [number, number];
		/** @minItems 1 */ head_rest?: [string, ...number[]];
		open_tuple?: [string?, boolean?, ...unknown[]];
		/** @minItems 2 */ draft07_tuple?: [string, /** @integer */ number];
	}): Promise<ToolResult>;
}
