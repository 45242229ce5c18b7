declare namespace recursion {
	/** Recursion TypeScript accepts, and recursion through tuples that it resolves eagerly. */
	function shapes(input?: {
		list?: shapes.List;
		tree?: shapes.Tree;
		tuple_rest?: shapes.TupleRest;
		via_alias?: shapes.ViaAlias;
		nested?: shapes.Nested;
		through_object?: shapes.ThroughObject;
	}): Promise<ToolResult>;
	namespace shapes {
		type List = string | List[];
		interface Tree {
			kids?: Tree[];
		}
		type TupleRest = string | [string?, ...[unknown?, ...unknown[]][]];
		type ViaAlias = { k?: string } & [string?, ...[unknown?, ...unknown[]][]];
		type Nested = Record<string, unknown> & [[string?, ...[unknown?, ...unknown[]][]]?, ...unknown[]];
		type ThroughObject = string | [{ again?: ThroughObject }?, ...unknown[]];
	}
}

// Problems:
// recursion:shapes: /inputSchema/$defs/tuple_rest/anyOf/1/items/prefixItems/0/$ref: $ref "#/$defs/tuple_rest" recurses through a tuple, which TypeScript resolves eagerly and cannot declare; the reference degrades to unknown
// recursion:shapes: /inputSchema/$defs/via_alias/allOf/1/items/prefixItems/0/$ref: $ref "#/$defs/alias" recurses through a tuple, which TypeScript resolves eagerly and cannot declare; the reference degrades to unknown
// recursion:shapes: /inputSchema/$defs/nested/allOf/1/prefixItems/0/items/prefixItems/0/$ref: $ref "#/$defs/nested" recurses through a tuple, which TypeScript resolves eagerly and cannot declare; the reference degrades to unknown
