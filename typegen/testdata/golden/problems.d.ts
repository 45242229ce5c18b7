declare namespace problems {
	function badKeywords(input?: {
		t?: unknown;
		e?: unknown;
		p?: Record<string, unknown>;
		r?: Record<string, unknown>;
		n?: unknown;
		u?: unknown;
		tt?: unknown;
	}): Promise<ToolResult>;
	function cycle(input?: { x?: cycle.A }): Promise<ToolResult>;
	namespace cycle {
		type A = unknown;
	}
	/** Its ref points nowhere. */
	function danglingRef(input: { a: unknown; b?: string }): Promise<ToolResult>;
	function externalRef(input?: { a?: unknown; f?: unknown }): Promise<ToolResult>;
	function falseSchema(input: never): Promise<ToolResult>;
	/** The other tools still get their types. */
	function fine(input: { ok: boolean }): Promise<ToolResult>;
	/** @remarks the input schema could not be read, so the input is not checked here */
	function missingSchema(input?: Record<string, unknown>): Promise<ToolResult>;
	/** @remarks the input schema could not be read, so the input is not checked here */
	function notAnObjectSchema(input?: Record<string, unknown>): Promise<ToolResult>;
	/** @remarks the input schema could not be read, so the input is not checked here */
	function schemaIsString(input?: Record<string, unknown>): Promise<ToolResult>;
	function selfRoot(input: unknown): Promise<ToolResult>;
	function stringInput(input: string): Promise<ToolResult>;
}

// Problems:
// problems:bad_keywords: /inputSchema/properties/t/type: unknown type "date" (expected string, number, integer, boolean, null, array or object); it degrades to unknown
// problems:bad_keywords: /inputSchema/properties/e/enum: enum must be an array, not a string; it is ignored
// problems:bad_keywords: /inputSchema/properties/p/properties: properties must be an object, not an array; it is ignored
// problems:bad_keywords: /inputSchema/properties/r/required: required must be an array of property names, not a string; it is ignored
// problems:bad_keywords: /inputSchema/properties/n: a schema must be a JSON object or a boolean, not a number; the type degrades to unknown
// problems:bad_keywords: /inputSchema/properties/u/anyOf: must be an array of schemas, not an object; it is ignored
// problems:bad_keywords: /inputSchema/properties/tt/type: type must be a string or an array of strings, not a number; it is ignored
// problems:cycle: /inputSchema/$defs/a/anyOf/1/$ref: $ref "#/$defs/b" closes a cycle that never passes through an object or array, which no value can satisfy (and TypeScript cannot declare); the type degrades to unknown
// problems:dangling_ref: /inputSchema/properties/a/$ref: $ref "#/$defs/missing" points nowhere: there is no "$defs" at that place in the schema; fix the ref or add the definition; the type degrades to unknown
// problems:external_ref: /inputSchema/properties/a/$ref: $ref "https://example.com/schema.json" points outside the schema; only refs inside it (like "#/$defs/Name") are supported, so inline the referenced schema; the type degrades to unknown
// problems:external_ref: /inputSchema/properties/f/$ref: $ref "file:///etc/passwd" points outside the schema; only refs inside it (like "#/$defs/Name") are supported, so inline the referenced schema; the type degrades to unknown
// problems:false_schema: /inputSchema: inputSchema is false, which accepts no input at all; the tool cannot be called
// problems:missing_schema: /inputSchema: the tool has no inputSchema; MCP requires one (use {"type":"object"} for a tool without arguments)
// problems:not_an_object_schema: /inputSchema: inputSchema must be a JSON Schema object, not an array
// problems:schema_is_string: /inputSchema: inputSchema must be a JSON Schema object, not a string
// problems:self_root: /inputSchema/$ref: $ref "#" closes a cycle that never passes through an object or array, which no value can satisfy (and TypeScript cannot declare); the type degrades to unknown
// problems:string_input: /inputSchema/type: inputSchema must describe an object (MCP sends arguments as a JSON object); the declared type is kept as the server wrote it
