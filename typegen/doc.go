// Package typegen turns MCP tool definitions into the TypeScript declarations
// an agent reads before it writes code, and is the one place where tools get
// their TypeScript names.
//
// The pipeline for one catalog:
//
//	names := typegen.AssignNames(catalog)         // once per catalog change
//	out, err := typegen.Generate(subset, typegen.Options{Names: names, Cache: cache})
//	// out.DTS: one global .d.ts; out.Tools: what the bindings must install;
//	// out.Problems: schema trouble per tool, with JSON pointers.
//
// Each server becomes a namespace and each tool a function returning a
// Promise: of its outputSchema's type when it has one, otherwise of
// ToolResult, the documented shape of what the bindings resolve to
// (ARCHITECTURE.md contract 2). Every function rejects with MCPToolError
// (contract 3). The declarations compile under tsc --strict, carry every
// description as JSDoc, and are byte-for-byte deterministic.
//
// Design decisions and their reasons are in docs/typegen.md.
package typegen
