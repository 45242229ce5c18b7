declare namespace refs {
	function draft07(input?: {
		from?: draft07.Point;
		/** Wrapped ref (draft-07 style). */ to?: draft07.Point;
		spaced?: draft07.AB;
		by_pointer?: draft07.From;
		anchored?: draft07.Anchored;
		extended?: draft07.Point & { z?: number };
	}): Promise<ToolResult>;
	namespace draft07 {
		interface Point {
			x: number;
			y: number;
		}
		type AB = string;
		type From = Point;
		type Anchored = boolean;
	}
	/** A filter that nests itself through the root. */
	function self(input: self.Input): Promise<ToolResult>;
	namespace self {
		interface Input {
			field: string;
			and?: Input[];
		}
	}
	/** Recursive structures through $defs. */
	function tree(input: {
		root: tree.Node;
		/** Sibling description of a ref. */ payload?: tree.Json;
		label?: tree.Node_2;
	}): Promise<ToolResult>;
	namespace tree {
		/** A tree node. */ interface Node {
			value: string;
			children?: Node[];
		}
		/** Any JSON value. */ type Json = string | number | boolean | null | Json[] | { [key: string]: Json };
		/** Same name after PascalCase: gets a suffix. */ type Node_2 = string;
	}
}
