package frontend

import (
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/sandboxrt/sandbox/auth"
)

// SessionTool is a tool that only some sessions have: code mode's saved
// scripts, which are their owner's. It is listed and called like a
// built-in tool, in the sessions of the callers the provider gives it to
// (over streamable HTTP; stdio sessions have none).
type SessionTool struct {
	Name        string
	Description string
	InputSchema json.RawMessage
	Handler     ToolHandler
}

// SetSessionTools sets what gives each caller its session tools; a session
// gets them when it starts, and again on RefreshSessionTools.
func (s *Server) SetSessionTools(provider func(auth.Caller) []SessionTool) {
	s.mu.Lock()
	s.sessionTools = provider
	s.mu.Unlock()
}

// RefreshSessionTools gives the open sessions of a principal (by its Key;
// "" for every principal) their session tools again, after they changed;
// mcp-go tells those clients that the tool list changed.
func (s *Server) RefreshSessionTools(principal string) {
	s.mu.Lock()
	var sessions []*session
	for _, sess := range s.sessions {
		if principal == "" || sess.caller.Principal.Key() == principal {
			sessions = append(sessions, sess)
		}
	}
	s.mu.Unlock()
	for _, sess := range sessions {
		s.applySessionTools(sess)
	}
}

// applySessionTools replaces a session's session tools with the provider's.
func (s *Server) applySessionTools(sess *session) {
	s.mu.Lock()
	provider := s.sessionTools
	s.mu.Unlock()
	withTools, ok := sess.cs.(server.SessionWithTools)
	if provider == nil || !ok {
		return
	}
	tools := map[string]server.ServerTool{}
	for _, t := range provider(sess.caller) {
		if !validWire(t.Name) || !json.Valid(t.InputSchema) {
			s.log.Warn("a session tool with an invalid name or schema was left out", "tool", t.Name)
			continue
		}
		tools[t.Name] = server.ServerTool{Tool: mcp.NewToolWithRawSchema(t.Name, t.Description, t.InputSchema), Handler: s.builtinHandler(t.Name, t.Handler)}
	}
	withTools.SetSessionTools(tools)
	if sess.cs.Initialized() {
		_ = s.mcp.SendNotificationToSpecificClient(sess.cs.SessionID(), string(mcp.MethodNotificationToolsListChanged), nil)
	}
}
