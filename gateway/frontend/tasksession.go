package frontend

// A 2025 session may declare the tasks extension once, at initialize
// (capabilities.extensions), rather than in each request's _meta as a
// 2026-07-28 request does: its requests are then the extension's as if
// each declared it. The declaration is kept with the session's shared
// state (SessionDirectory part "tasks"), so another replica serving the
// session knows it too.

import (
	"context"
	"net/http"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/sandboxrt/sandbox/auth"
)

// partTasks is the session state part that says the session declared the
// tasks extension at initialize ("1").
const partTasks = "tasks"

// noteSessionExtensions keeps, for the other replicas, that a session
// declared the tasks extension at initialize.
func (s *Server) noteSessionExtensions(ctx context.Context, req *mcp.InitializeRequest) {
	if s.tasks == nil || req == nil {
		return
	}
	if _, ok := req.Params.Capabilities.Extensions[TasksExtension]; !ok {
		return
	}
	caller := callerOf(ctx)
	if err := s.shareState(ctx, caller, partTasks, []byte("1")); err != nil {
		s.log.Warn("that the session declared the tasks extension could not be shared with the other replicas", "session", string(caller.Session), "error", err)
	}
}

// sessionDeclaresTasks reports whether the request's session (a 2025
// session, checked as the requester's by checkSession) declared the tasks
// extension at initialize: on this replica, by the capabilities it
// initialized with; on another, by the directory's entry.
func (h *httpHandler) sessionDeclaresTasks(r *http.Request) bool {
	id := r.Header.Get(server.HeaderKeySessionID)
	if id == "" {
		return false
	}
	if v, ok := r.Context().Value(verifiedSessionKey{}).(verifiedSession); ok && v.id == id && string(v.state[partTasks]) == "1" {
		return true
	}
	sess := h.s.sessionByID(id)
	if sess == nil || sess.caller.Principal.Key() != auth.PrincipalFrom(r.Context()).Key() {
		return false
	}
	ci, ok := sess.cs.(server.SessionWithClientInfo)
	if !ok {
		return false
	}
	_, declared := ci.GetClientCapabilities().Extensions[TasksExtension]
	return declared
}
