declare namespace fetch_ {
	/** A server named like a global. @tool "fetch:fetch" */
	function fetch(input?: Record<string, never>): Promise<ToolResult>;
}
declare namespace googleMaps {
	function geocode(input?: Record<string, never>): Promise<ToolResult>;
}
declare namespace googleMaps_2 {
	/** @tool "google_maps:geocode" */
	function geocode(input?: Record<string, never>): Promise<ToolResult>;
}
declare namespace names {
	/** @tool "names:2fa_verify" */
	function _2faVerify(input?: Record<string, never>): Promise<ToolResult>;
	function apiGetUser(input?: Record<string, never>): Promise<ToolResult>;
	function cafeOrder(input?: Record<string, never>): Promise<ToolResult>;
	/** @tool "names:constructor" */
	function constructor_(input?: Record<string, never>): Promise<ToolResult>;
	/** A reserved word. @tool "names:delete" */
	function delete_(input?: Record<string, never>): Promise<ToolResult>;
	function getHTTPStatus(input?: Record<string, never>): Promise<ToolResult>;
	function listItems(input?: Record<string, never>): Promise<ToolResult>;
	/** @tool "names:list-items" */
	function listItems_2(input?: Record<string, never>): Promise<ToolResult>;
	/** @tool "names:list_items" */
	function listItems_3(input?: Record<string, never>): Promise<ToolResult>;
	function proto(input?: Record<string, never>): Promise<ToolResult>;
	/** Would make the namespace a thenable. @tool "names:then" */
	function then_(input?: Record<string, never>): Promise<ToolResult>;
	/** @tool "names:検索" */
	function tool(input?: Record<string, never>): Promise<ToolResult>;
}
