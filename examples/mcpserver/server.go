// Package mcpserver is the example MCP server of the README demos and the
// end-to-end tests: a small project tracker (projects, tasks, documents)
// with eight tools that look like real ones. It needs no network and no
// keys, and it is deterministic: state is seeded the same way on every
// start, ids are sequential and the date is fixed (Today).
//
// The tools cover what code mode has to handle: typed input schemas with
// enums, defaults, formats, nested objects and arrays; output schemas with
// structuredContent (get_project, search_tasks, create_task,
// update_task_status); a JSON-text result (list_projects); plain-text
// results (read_document, team_workload, delete_task); isError results for
// input the tracker's rules reject (create_task on an archived project, an
// unknown assignee, a past due date, ...); a path argument (read_document,
// where the gateway's path sanitization shows); and read-only and
// destructive annotations.
//
// Run it with `go run ./examples/mcpserver/cmd/example-mcpserver` (stdio) or
// use New in-process.
package mcpserver

import (
	"github.com/mark3labs/mcp-go/server"
)

// Name is the server name the tracker reports in its initialize result.
const Name = "acme-tracker"

// New returns a tracker server with its own freshly seeded state.
func New() *server.MCPServer {
	s := server.NewMCPServer(Name, "1.0.0",
		server.WithInstructions("Acme's project tracker: projects (PRJ-n), their tasks (T-n) and documents. "+
			"Start with list_projects or search_tasks; the date is fixed at "+Today+"."),
		server.WithToolCapabilities(false),
		server.WithRecovery(),
	)
	t := &tracker{store: seed()}
	s.AddTools(t.tools()...)
	return s
}
