package typegen

// Preamble is declared once at the top of every generated file. It is global
// (no import/export), like the namespaces, because agent scripts are plain
// scripts that the runtime wraps in an async function.
//
// ToolResult is ARCHITECTURE.md contract 2 spelled as a type; MCPToolError is
// contract 3. The runtime implements both (runtime.DecodeResult,
// runtime.ToolError); change them together. SandboxResultHandle is declared
// again, with its members described, in Globals (interfaces merge: the
// two must agree).
const Preamble = `/** Any JSON value. */
type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
/** One MCP content block, as the server sent it. */
type ContentBlock =
	| { type: "text"; text: string }
	| { type: "image" | "audio"; data: string; mimeType: string }
	| { type: "resource"; resource: { uri: string; mimeType?: string; text?: string; blob?: string } }
	| { type: "resource_link"; uri: string; name: string; mimeType?: string; description?: string };
/**
 * What a tool without an output schema resolves to: its structuredContent if the result has one;
 * else, if every content block is text, the text (blocks joined by newlines) parsed as JSON, or the
 * text itself if it is not JSON; else the content blocks as the server sent them; null if empty.
 * Any tool call resolves to a SandboxResultHandle instead when its result is too large to hand over
 * whole (over what is left of the run's budget of tool results, a quarter of its memory limit).
 */
type ToolResult = JsonValue | ContentBlock[] | SandboxResultHandle;
/** A tool result too large to hand over whole: read it in parts with sandbox.results (note says how). */
interface SandboxResultHandle { handle: string; bytes: number; preview: string; tool: string; note: string }
/**
 * Every tool function rejects with this. code is one of VALIDATION_FAILED (fix the input),
 * UNKNOWN_TOOL, SERVICE_NOT_FOUND, PATH_TRAVERSAL, RATE_LIMITED, TIMEOUT, CANCELLED,
 * UPSTREAM_UNAVAILABLE, UPSTREAM_ERROR, PROTOCOL_ERROR, RESULT_TOO_LARGE, NOT_BOUND; message says
 * what to do next.
 */
declare class MCPToolError extends Error {
	readonly name: "MCPToolError";
	/** The tool's id, "server:tool". */
	readonly tool: string;
	readonly code: string;
	readonly data?: unknown;
}
`
