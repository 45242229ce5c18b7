declare namespace typearrays {
	function nullable(input: {
		maybe_string: string | null;
		maybe_object?: { a: string } | null;
		list_or_one?: string[] | string;
		openapi_nullable?: string | null;
	}): Promise<ToolResult>;
}
