declare namespace booleans {
	function schemas(input?: {
		anything?: unknown;
		nothing?: never;
		empty?: unknown;
		/** Whatever you like. */ described_any?: unknown;
	}): Promise<ToolResult>;
	function trueInput(input?: Record<string, unknown>): Promise<ToolResult>;
}
