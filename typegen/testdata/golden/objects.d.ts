declare namespace objects {
	function shapes(input: {
		nested: { inner: { deep: string } };
		free_form?: Record<string, unknown>;
		open_with_props?: { a?: string; [key: string]: unknown };
		closed?: { a?: string };
		string_map?: Record<string, string>;
		map_with_props?: { count?: number; [key: string]: string | number | undefined };
		pattern_map?: {
			/** Keys matching ^x- or ^n_ */ [key: string]: string | number;
		};
		empty_closed?: Record<string, never>;
		"odd keys"?: {
			"content-type"?: string;
			$meta?: string;
			"123"?: number;
			""?: boolean;
			"ünïcode"?: string;
			"a\"b"?: string;
		};
		required_undeclared?: { a: string; b: unknown };
	}): Promise<ToolResult>;
}
