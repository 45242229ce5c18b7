package frontend

import (
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/gateway/toolspec"
)

// SetCallerTools sets what gives each caller tools of its own, beside the
// built-in tools every session has: a principal's saved scripts, say. They
// are listed and called like built-in tools, in the sessions of that caller
// (over stdio too: setStdioTools). A session gets them when
// it starts, and again on RefreshCallerTools. A spec's MaxArgumentBytes is
// checked once the call is decoded.
func (s *Server) SetCallerTools(provider func(auth.Caller) []toolspec.Spec) {
	s.mu.Lock()
	s.callerTools = provider
	s.mu.Unlock()
}

// RefreshCallerTools gives the open sessions of a principal (by its Key;
// "" for every principal) their caller tools again, after they changed;
// mcp-go tells those clients that the tool list changed.
func (s *Server) RefreshCallerTools(principal string) {
	s.mu.Lock()
	var sessions []*session
	for _, sess := range s.sessions {
		if principal == "" || sess.caller.Principal.Key() == principal {
			sessions = append(sessions, sess)
		}
	}
	s.mu.Unlock()
	for _, sess := range sessions {
		s.applyCallerTools(sess)
	}
}

// applyCallerTools replaces a session's caller tools with the provider's.
func (s *Server) applyCallerTools(sess *session) {
	s.mu.Lock()
	provider := s.callerTools
	s.mu.Unlock()
	withTools, ok := sess.cs.(server.SessionWithTools)
	stdio := !ok && sess.cs.SessionID() == stdioSessionID
	if provider == nil || (!ok && !stdio) {
		return
	}
	tools := map[string]server.ServerTool{}
	for _, t := range provider(sess.caller) {
		if err := checkSpec(t); err != nil {
			s.log.Warn("a caller tool was left out", "tool", t.Name, "error", err)
			continue
		}
		tools[t.Name] = server.ServerTool{Tool: mcp.NewToolWithRawSchema(t.Name, t.Description, t.InputSchema), Handler: s.builtinHandler(t)}
	}
	if stdio {
		s.setStdioTools(tools)
		return
	}
	withTools.SetSessionTools(tools)
	if sess.cs.Initialized() {
		_ = s.mcp.SendNotificationToSpecificClient(sess.cs.SessionID(), string(mcp.MethodNotificationToolsListChanged), nil)
	}
}

// setStdioTools makes tools the stdio client's caller tools. mcp-go's stdio
// session keeps no tools of its own, so they are the server's: a process
// serves stdio to one client (ServeStdio), whose tools they then are.
// mcp-go tells the client that the list changed.
func (s *Server) setStdioTools(tools map[string]server.ServerTool) {
	s.mu.Lock()
	var gone []string
	for name := range s.stdioTools {
		if _, kept := tools[name]; !kept {
			gone = append(gone, name)
		}
	}
	s.stdioTools = map[string]bool{}
	add := make([]server.ServerTool, 0, len(tools))
	for name, t := range tools {
		s.stdioTools[name] = true
		add = append(add, t)
	}
	s.mu.Unlock()
	if len(gone) > 0 {
		s.mcp.DeleteTools(gone...)
	}
	if len(add) > 0 {
		s.mcp.AddTools(add...)
	}
}
