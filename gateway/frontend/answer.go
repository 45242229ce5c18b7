package frontend

// What a handler answers that mcp-go cannot write for it. mcp-go turns
// every error a handler returns into -32603 with HTTP 200, and builds a
// resources/read result from contents alone; protocol 2026-07-28 needs
// more: an upstream's -32021 (a capability the client did not declare)
// passed on with HTTP 400, -32602 for a bad requestState or malformed
// inputResponses, an upstream's own error code and data (data.uri on a
// missing resource), and a resources/read that answers input_required. A
// handler puts the answer in the request's slot; the writer mcp-go answers
// on writes it in place of mcp-go's. Without a slot (stdio) the handler's
// error goes out as mcp-go writes it.

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync"

	"github.com/mark3labs/mcp-go/server"
)

type answerSlot struct {
	mu     sync.Mutex
	msg    map[string]any // the JSON-RPC response without jsonrpc and id
	status int
}

type answerKey struct{}

func withAnswerSlot(ctx context.Context) context.Context {
	return context.WithValue(ctx, answerKey{}, &answerSlot{})
}

func answerSlotFrom(ctx context.Context) *answerSlot {
	s, _ := ctx.Value(answerKey{}).(*answerSlot)
	return s
}

// rpcError is a JSON-RPC error object.
type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// answerError makes the request's answer the JSON-RPC error e, with the
// HTTP status protocol 2026-07-28 gives its code, and returns an error for
// the handler to return (what mcp-go writes when there is no slot).
func answerError(ctx context.Context, e rpcError) error {
	if s := answerSlotFrom(ctx); s != nil {
		s.mu.Lock()
		s.msg, s.status = map[string]any{"error": e}, statusOf(e.Code)
		s.mu.Unlock()
	}
	return errors.New(e.Message)
}

// answerResult makes the request's answer result, raw; false when the
// request has no slot.
func answerResult(ctx context.Context, result json.RawMessage) bool {
	s := answerSlotFrom(ctx)
	if s == nil {
		return false
	}
	s.mu.Lock()
	s.msg, s.status = map[string]any{"result": result}, http.StatusOK
	s.mu.Unlock()
	return true
}

// statusOf is the HTTP status of a JSON-RPC error code on 2026-07-28.
func statusOf(code int) int {
	switch code {
	case -32601:
		return http.StatusNotFound
	case -32700, -32600, -32602, -32020, -32021:
		return http.StatusBadRequest
	}
	return http.StatusOK
}

// answeringWriter is the writer mcp-go answers a request on: once the
// handler filled the slot, mcp-go's answer is replaced by the slot's.
type answeringWriter struct {
	inner server.HTTPResponseWriter
	slot  *answerSlot
	id    json.RawMessage
	// passed: some of mcp-go's output went out before the slot was filled
	// (an SSE stream opened for a notification); replaced is set once the
	// slot's answer is written.
	passed, replaced bool
}

func answering(inner server.HTTPResponseWriter, slot *answerSlot, id json.RawMessage) server.HTTPResponseWriter {
	if slot == nil {
		return inner
	}
	return &answeringWriter{inner: inner, slot: slot, id: id}
}

func (w *answeringWriter) Header() http.Header { return w.inner.Header() }

func (w *answeringWriter) WriteHeader(code int) {
	if w.replace() {
		return
	}
	w.passed = true
	w.inner.WriteHeader(code)
}

func (w *answeringWriter) Write(p []byte) (int, error) {
	if w.replace() {
		return len(p), nil
	}
	w.passed = true
	return w.inner.Write(p)
}

func (w *answeringWriter) Flush() {
	if !w.replaced {
		w.inner.Flush()
	}
}

func (w *answeringWriter) CanStream() bool { return w.inner.CanStream() }

// replace writes the slot's answer the first time mcp-go writes after the
// handler filled it, and reports whether mcp-go's output is to be dropped.
func (w *answeringWriter) replace() bool {
	if w.replaced {
		return true
	}
	w.slot.mu.Lock()
	msg, status := w.slot.msg, w.slot.status
	w.slot.mu.Unlock()
	if msg == nil {
		return false
	}
	w.replaced = true
	msg["jsonrpc"] = "2.0"
	if len(w.id) > 0 {
		msg["id"] = w.id
	} else {
		msg["id"] = nil
	}
	body, _ := json.Marshal(msg)
	if !w.passed {
		w.inner.Header().Set("Content-Type", "application/json")
		w.inner.WriteHeader(status)
	}
	_, _ = w.inner.Write(body)
	return true
}
