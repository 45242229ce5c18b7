package frontend

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/internal/logx"
	"github.com/sandboxrt/sandbox/internal/mcphttp"
)

// CallStreamStore keeps, for replicas, the call streams whose client went
// away (SEP-1699 resumability), so that the client resuming with GET and
// Last-Event-ID is served by whichever replica its request lands on.
//
// A stream is handed over when its client leaves, not before: a call whose
// client stays connected costs the store nothing. The replica running the
// call appends its events as they come and holds a lease on the stream
// while the call runs; a stream left incomplete when its lease runs out was
// abandoned by a replica that stopped, and the client is told so.
type CallStreamStore interface {
	// Append adds events to a stream (the first Append carries the events
	// from the first one on, and info), marks it complete when the call
	// has answered, and renews the running replica's lease for lease.
	Append(ctx context.Context, id string, info StreamInfo, events []StreamEvent, complete bool, lease time.Duration) error
	// Read returns a stream's info and its events from seq from on, whether
	// it is complete and whether its lease holds (ok false: no such stream).
	Read(ctx context.Context, id string, from int) (info StreamInfo, events []StreamEvent, complete, leased, ok bool, err error)
}

// StreamInfo says whose a handed-over stream is.
type StreamInfo struct {
	Session   string // the MCP session of the call
	Principal string // auth.Principal.Key of its caller
}

// StreamEvent is one event of a call stream: its sequence number (0, 1, ...)
// and its data (a JSON-RPC message; empty for the priming event).
type StreamEvent struct {
	Seq  int
	Data []byte
}

const (
	// streamLease is how long a handed-over stream is taken for alive
	// without news from the replica running its call, which renews it
	// every streamLease/3.
	streamLease = 10 * time.Second
	// resumePoll is how often a replica serving a handed-over stream looks
	// for its new events.
	resumePoll = 150 * time.Millisecond
)

// handOffWait is how long a replica asked to resume a stream it never saw
// waits for the replica running the call to hand it over (it does so as
// soon as it notices its client left). A variable for tests.
var handOffWait = 3 * time.Second

// maxIDInStream bounds the JSON-RPC request ids carried in stream ids.
const maxIDInStream = 96

// maxSharedResumes bounds the resumes from the store one principal may have
// open on a replica at once: each polls the store while it waits.
const maxSharedResumes = 8

// parseEventID splits a Last-Event-ID of ours into its stream id and
// sequence number; anything else (a forged, oversized or foreign id) is
// refused before it reaches a store: "cs_", 24 hex digits, optionally "~"
// and the request id in base64url, ".", the sequence number.
func parseEventID(v string) (streamID string, seq int, ok bool) {
	streamID, seq, ok = mcphttp.SplitEventID(v)
	if !ok {
		return "", 0, false
	}
	rest, ok := strings.CutPrefix(streamID, streamIDPrefix)
	if !ok || len(rest) < 24 {
		return "", 0, false
	}
	random, enc, hasID := strings.Cut(rest, "~")
	if len(random) != 24 || strings.Trim(random, "0123456789abcdef") != "" {
		return "", 0, false
	}
	if hasID && (enc == "" || len(enc) > base64.RawURLEncoding.EncodedLen(maxIDInStream) ||
		strings.Trim(enc, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") != "") {
		return "", 0, false
	}
	return streamID, seq, true
}

// newStreamID names a call stream. The call's request id rides in it (when
// short) so that any replica can answer the call with an error when the
// replica running it stopped before handing it over: a client resuming
// needs a response with its request's id, and nothing else tells it.
func newStreamID(random string, requestID json.RawMessage) string {
	id := streamIDPrefix + random
	if len(requestID) > 0 && len(requestID) <= maxIDInStream {
		id += "~" + base64.RawURLEncoding.EncodeToString(requestID)
	}
	return id
}

// requestIDIn returns the request id a stream id carries (nil: none).
func requestIDIn(streamID string) json.RawMessage {
	_, enc, ok := strings.Cut(streamID, "~")
	if !ok {
		return nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(enc)
	if err != nil || len(raw) > maxIDInStream || !json.Valid(raw) {
		return nil
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return nil
	}
	switch v.(type) {
	case string, float64:
		return raw
	}
	return nil
}

// handOff writes a detached stream to the store, then what follows until
// its call answers, renewing the lease meanwhile.
//
// It stops when the stream is no longer kept here (evicted for the
// principal's newer ones: what the replica does not keep, the store does
// not get either) and, as the call does, after detachedLimit.
func (h *httpHandler) handOff(cs *callStream) {
	info := StreamInfo{Session: cs.session, Principal: cs.owner}
	id := cs.ID()
	// A goroutine of its own, which nothing else recovers: a panic (say,
	// in the store) stops the hand-off rather than end the process. The
	// call goes on here, resumable on this replica; a resumer elsewhere
	// hears, once the lease lapses, that the outcome is unknown.
	defer func() {
		if r := recover(); r != nil {
			logx.Panic(h.s.log, "handing a detached call stream to the other replicas panicked; it is resumable on this replica only", r, "stream", id)
		}
	}()
	renew := time.NewTicker(streamLease / 3)
	defer renew.Stop()
	deadline := time.Now().Add(detachedLimit + time.Minute)
	next := 0
	for !cs.evicted.Load() && time.Now().Before(deadline) {
		events, complete, changed := cs.EventsFrom(next)
		out := make([]StreamEvent, 0, len(events))
		for _, ev := range events {
			out = append(out, StreamEvent{Seq: ev.Seq, Data: ev.Data})
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := h.shared.Append(ctx, id, info, out, complete, streamLease)
		cancel()
		if err != nil {
			// The next round sends them again; a resumer meanwhile sees
			// the stream as it was (and its lease runs out if this lasts).
			h.s.log.Warn("a detached call stream could not be handed to the other replicas", "stream", id, "error", err)
		} else if len(events) > 0 {
			next = events[len(events)-1].Seq + 1
		}
		if complete && err == nil {
			return
		}
		select {
		case <-changed:
		case <-renew.C:
		}
	}
}

// resumeShared serves GET + Last-Event-ID for a stream this replica does
// not hold, from the store: the events after lastSeq, then the rest as the
// replica running the call hands them over. When that replica stopped
// (no stream appeared in time, or its lease ran out), the call is answered
// with an error saying its outcome is unknown, so the client neither hangs
// nor takes silence for an answer.
func (h *httpHandler) resumeShared(w http.ResponseWriter, r *http.Request, streamID string, lastSeq int) {
	ctx := r.Context()
	principal := auth.PrincipalFrom(ctx).Key()
	if !h.takeResume(principal) {
		w.Header().Set("Retry-After", "1")
		http.Error(w, fmt.Sprintf("Too Many Requests: you are resuming %d call streams here at once, the most one principal may; resume this one when one of them ends", maxSharedResumes), http.StatusTooManyRequests)
		return
	}
	defer h.giveResume(principal)
	session := r.Header.Get(server.HeaderKeySessionID)
	next := lastSeq + 1
	started := false
	deadline := time.Now().Add(handOffWait)
	var failingSince time.Time
	for {
		info, events, complete, leased, ok, err := h.shared.Read(ctx, streamID, next)
		if err == nil {
			failingSince = time.Time{}
		} else if failingSince.IsZero() {
			failingSince = time.Now()
		}
		switch {
		case err != nil && !started:
			w.Header().Set("Retry-After", "2")
			http.Error(w, "Service Unavailable: the store replicas share call streams in (Redis) does not answer; resume again in a moment", http.StatusServiceUnavailable)
			return
		case err != nil && time.Since(failingSince) > streamLease:
			return // the store is gone: end here; the client resumes again later
		case err != nil:
			leased = true // say nothing yet: try again
		case !ok && time.Now().Before(deadline):
			leased = true // not handed over yet
		case !ok:
			h.abandoned(w, streamID, started, "the replica running this call stopped before it could hand the call's stream over")
			return
		case info.Session != session || info.Principal != principal:
			http.Error(w, "unknown Last-Event-ID: the stream finished long ago, belongs to another session, or never existed; send the request again", http.StatusNotFound)
			return
		}
		if !started && ok {
			mcphttp.StartSSE(w)
			started = true
		}
		for _, ev := range events {
			if _, err := w.Write(mcphttp.Event{Seq: ev.Seq, Data: nilIfEmpty(ev.Data)}.Frame(streamID)); err != nil {
				return
			}
			next = ev.Seq + 1
		}
		if f, ok := w.(http.Flusher); ok && started {
			f.Flush()
		}
		switch {
		case complete:
			return
		case ok && !leased:
			h.abandoned(w, streamID, started, "the replica running this call stopped before the call finished")
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(resumePoll):
		}
	}
}

func (h *httpHandler) takeResume(principal string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.resuming[principal] >= maxSharedResumes {
		return false
	}
	if h.resuming == nil {
		h.resuming = map[string]int{}
	}
	h.resuming[principal]++
	return true
}

func (h *httpHandler) giveResume(principal string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.resuming[principal]--; h.resuming[principal] <= 0 {
		delete(h.resuming, principal)
	}
}

func nilIfEmpty(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}

// abandoned answers a call whose replica stopped: with a JSON-RPC error for
// its request id, on the stream, when the stream id carries it; else 404.
func (h *httpHandler) abandoned(w http.ResponseWriter, streamID string, started bool, why string) {
	msg := why + "; whether it took effect is unknown: check before calling again"
	rid := requestIDIn(streamID)
	if rid == nil {
		if !started {
			http.Error(w, "unknown Last-Event-ID: "+msg, http.StatusNotFound)
		}
		return
	}
	if !started {
		mcphttp.StartSSE(w)
	}
	resp, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": rid,
		"error": map[string]any{"code": -32603, "message": msg}})
	_, _ = w.Write(mcphttp.Event{Data: resp}.Frame("")) // no id: nothing follows it
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}
