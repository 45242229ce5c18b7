declare namespace primitives {
	function allOptional(input?: {
		/** @integer */ limit?: number;
	}): Promise<ToolResult>;
	/** Every primitive type, required and optional. */
	function allTypes(input: {
		s: string;
		n: number;
		/** @integer */ i: number;
		b: boolean;
		z: null;
		opt?: string;
	}): Promise<ToolResult>;
	/** A tool without arguments. */
	function noArgs(input?: Record<string, never>): Promise<ToolResult>;
	function noArgsClosed(input?: Record<string, never>): Promise<ToolResult>;
}
