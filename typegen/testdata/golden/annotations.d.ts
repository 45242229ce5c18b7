declare namespace annotations {
	/** Title from annotations */
	function annotationTitle(input?: Record<string, never>): Promise<ToolResult>;
	/** Adds. @nonDestructive */
	function append(input?: Record<string, never>): Promise<ToolResult>;
	/** Deletes. @destructive @idempotent */
	function destroy(input?: Record<string, never>): Promise<ToolResult>;
	/** Reads. @readOnly */
	function readOnly(input?: Record<string, never>): Promise<ToolResult>;
	/** Only a title */
	function titled(input?: Record<string, never>): Promise<ToolResult>;
}
