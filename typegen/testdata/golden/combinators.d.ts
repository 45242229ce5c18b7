declare namespace combinators {
	/** Needs a path or a url, or both. */
	function atLeastOne(input: { path: string; url?: string } | { path?: string; url: string }): Promise<ToolResult>;
	function unions(input?: {
		/** A name or a number */ id?: string | /** @integer */ number;
		target?: /** By name */ { kind: "name"; name: string } | /** By id */ { kind: "id"; id: number };
		both?: { a: string } & { b?: number };
		formats?: string;
		base_and_variants?: { common: string } & ({ x: number } | { y: number });
		/** @not {"type":"null"} */ not_null?: unknown;
		/** @remarks further constrained by if/then/else in the schema */ conditional?: { mode?: string };
		nothing?: never;
	}): Promise<ToolResult>;
}
