package typegen

import (
	"sort"
	"strings"

	"github.com/sandboxrt/sandbox/errcode"
)

// Preamble is declared once at the top of every generated file. It is global
// (no import/export), like the namespaces, because agent scripts are plain
// scripts that the runtime wraps in an async function.
//
// ToolResult is ARCHITECTURE.md contract 2 spelled as a type; MCPToolError is
// contract 3. The runtime implements both (runtime.DecodeResult,
// runtime.ToolError); change them together. The codes MCPToolError's
// comment lists are errcode's table: every code a snippet can catch.
// SandboxResultHandle is declared again, with its members described, in
// Globals (interfaces merge: the two must agree).
var Preamble = `/** Any JSON value. */
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
/** A tool result too large to hand over whole: read it in parts with sandbox.results (see note). */
interface SandboxResultHandle {
	handle: string; bytes: number; preview: string; tool: string; note: string;
}
` + mcpToolErrorDoc() + `declare class MCPToolError extends Error {
	readonly name: "MCPToolError";
	/** The tool's id, "server:tool". */
	readonly tool: string;
	readonly code: string;
	readonly data?: unknown;
}
`

// mcpToolErrorDoc is the comment above MCPToolError: the codes a snippet
// can catch (errcode's table), grouped by what to do about them, in the
// table's order of advice and of codes.
func mcpToolErrorDoc() string {
	byAdvice := map[errcode.Advice][]string{}
	var advice []errcode.Advice
	for _, info := range errcode.All() {
		if !info.InSnippet {
			continue
		}
		if byAdvice[info.Advice] == nil {
			advice = append(advice, info.Advice)
		}
		byAdvice[info.Advice] = append(byAdvice[info.Advice], string(info.Code))
	}
	sort.Slice(advice, func(i, j int) bool { return advice[i] < advice[j] })
	words := strings.Fields("Every tool function rejects with this; message says what to do next. code is one of")
	for i, a := range advice {
		g := byAdvice[a]
		sep := ";"
		if i == len(advice)-1 {
			sep = "."
		}
		for k, c := range g {
			if k < len(g)-1 {
				c += ","
			}
			words = append(words, c)
		}
		words = append(words, strings.Fields("("+a.String()+")"+sep)...)
	}
	var b strings.Builder
	b.WriteString("/**\n *")
	line := 2
	for _, w := range words {
		if line+1+len(w) > 100 {
			b.WriteString("\n *")
			line = 2
		}
		b.WriteString(" " + w)
		line += 1 + len(w)
	}
	b.WriteString("\n */\n")
	return b.String()
}
