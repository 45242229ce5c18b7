package frontend

// The requestState the front end gives a 2026-07-28 client with an
// input_required answer (SEP-2322). It is the front end's own, never the
// upstream's: the upstream's state travels inside it, sealed (AES-256-GCM,
// so the client can neither read nor change it), bound to the caller's
// principal, to the request (method, tool, prompt or resource, and its
// arguments) and to an expiry. A state that fails any of these is refused
// with -32602 before anything reaches the upstream: tampered, forged,
// expired, another principal's, or another request's.

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/gateway"
)

// RequestStateTTL is how long a requestState the front end issued may come
// back: a person answering a question has this long.
const RequestStateTTL = 15 * time.Minute

// requestStatePrefix marks the front end's states (and their format
// version), so a state of another kind is told apart at once.
const requestStatePrefix = "sbx1."

// WithRequestStateKey sets the 32-byte key that seals requestStates.
// Replicas that share clients must share it (serve derives it from the
// Redis encryption key); without it each process draws its own, and a
// state comes back only to the process that issued it.
func WithRequestStateKey(key []byte) Option {
	return func(s *Server) {
		if sealer, err := newStateSealer(key); err == nil {
			s.states = sealer
		}
	}
}

type stateSealer struct {
	aead cipher.AEAD
	now  func() time.Time
}

func newStateSealer(key []byte) (*stateSealer, error) {
	if len(key) != 32 {
		return nil, fmt.Errorf("a requestState key is 32 bytes, got %d", len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &stateSealer{aead: aead, now: time.Now}, nil
}

func randomStateSealer() *stateSealer {
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	s, _ := newStateSealer(key)
	return s
}

// sealedState is what a requestState holds.
type sealedState struct {
	Principal string `json:"p"` // auth.Principal.Key
	Request   string `json:"r"` // requestBinding
	Expires   int64  `json:"e"` // unix milliseconds
	Upstream  string `json:"u"` // the upstream's own requestState, as it issued it
	// Run names the front end's paused run the request resumes
	// (pausedrun.go), in a field of its own: an upstream's state, whatever
	// it holds, never names one.
	Run string `json:"run,omitempty"`
}

// requestBinding names one request: its method, what it names (a tool or
// prompt wire name, a resource URI) and a digest of its arguments as
// canonical JSON (a client may re-encode them on its retry).
func requestBinding(method, name string, args json.RawMessage) string {
	var v any
	canonical := []byte("null")
	if len(args) > 0 && json.Unmarshal(args, &v) == nil {
		canonical, _ = json.Marshal(v)
	}
	sum := sha256.Sum256(canonical)
	return method + "\x00" + name + "\x00" + base64.RawStdEncoding.EncodeToString(sum[:16])
}

func (s *stateSealer) seal(p auth.Principal, binding, upstream string) string {
	return s.sealState(sealedState{Principal: p.Key(), Request: binding, Upstream: upstream})
}

// sealRun is the state of a request that resumes the paused run id.
func (s *stateSealer) sealRun(p auth.Principal, binding, id string) string {
	return s.sealState(sealedState{Principal: p.Key(), Request: binding, Run: id})
}

func (s *stateSealer) sealState(st sealedState) string {
	st.Expires = s.now().Add(RequestStateTTL).UnixMilli()
	plain, _ := json.Marshal(st)
	nonce := make([]byte, s.aead.NonceSize())
	_, _ = rand.Read(nonce)
	return requestStatePrefix + base64.RawURLEncoding.EncodeToString(s.aead.Seal(nonce, nonce, plain, []byte(requestStatePrefix)))
}

// errBadState is every refusal of a requestState; its message says what
// to do, never which check failed (a forger learns nothing).
var errBadState = errors.New("requestState was not issued for this request by this server, or has expired; send the request again without requestState and inputResponses to be asked afresh")

// open returns the upstream's state from a requestState the front end
// issued to p for the request binding names.
func (s *stateSealer) open(p auth.Principal, binding, state string) (string, error) {
	st, err := s.openState(p, binding, state)
	return st.Upstream, err
}

// openState is open, returning the whole state.
func (s *stateSealer) openState(p auth.Principal, binding, state string) (sealedState, error) {
	if len(state) <= len(requestStatePrefix) || state[:len(requestStatePrefix)] != requestStatePrefix {
		return sealedState{}, errBadState
	}
	sealed, err := base64.RawURLEncoding.DecodeString(state[len(requestStatePrefix):])
	n := s.aead.NonceSize()
	if err != nil || len(sealed) < n {
		return sealedState{}, errBadState
	}
	plain, err := s.aead.Open(nil, sealed[:n], sealed[n:], []byte(requestStatePrefix))
	if err != nil {
		return sealedState{}, errBadState
	}
	var st sealedState
	if json.Unmarshal(plain, &st) != nil || st.Principal != p.Key() || st.Request != binding || s.now().UnixMilli() > st.Expires {
		return sealedState{}, errBadState
	}
	return st, nil
}

// askingContext is ctx for a request's call to the gateway: made
// WithAsking for a 2026-07-28 request (modern), as it is for a 2025
// session's. A bad state or malformed answers is the client's -32602,
// answered (answerError) and returned.
func (s *Server) askingContext(ctx context.Context, binding string, mrt mcp.MultiRoundTripParams) (callCtx context.Context, modern bool, err error) {
	asking, modern, err := s.askingFor(ctx, binding, mrt)
	if err != nil {
		return nil, false, answerError(ctx, rpcError{Code: mcp.INVALID_PARAMS, Message: err.Error()})
	}
	if !modern {
		return ctx, false, nil
	}
	return gateway.WithAsking(ctx, asking), true, nil
}

// askingFor is the gateway.Asking of a 2026-07-28 request (ok false for a
// 2025 session's, which is asked through its session as before): the
// capabilities it declared and, on a retry, its answers with the
// upstream's state opened from the front end's. A bad state or malformed
// answers is an error for the client (-32602).
func (s *Server) askingFor(ctx context.Context, binding string, mrt mcp.MultiRoundTripParams) (gateway.Asking, bool, error) {
	info := server.RequestProtocolInfoFromContext(ctx)
	if info == nil || !info.Modern {
		return gateway.Asking{}, false, nil
	}
	var a gateway.Asking
	if info.ClientCapabilities != nil {
		a.Capabilities, _ = json.Marshal(info.ClientCapabilities)
	}
	if mrt.RequestState != "" {
		upstream, err := s.states.open(callerOf(ctx).Principal, binding, mrt.RequestState)
		if err != nil {
			return a, true, err
		}
		a.RequestState = upstream
	}
	if len(mrt.InputResponses) > 0 {
		raw := make(map[string]json.RawMessage, len(mrt.InputResponses))
		for key, r := range mrt.InputResponses {
			b, err := json.Marshal(r)
			if err != nil || len(b) == 0 || b[0] != '{' {
				return a, true, fmt.Errorf("inputResponses[%q] must be the JSON object that answers the input request of that key (an elicitation, sampling or roots result), not %s", key, truncateBytes(b, 40))
			}
			raw[key] = b
		}
		a.InputResponses, _ = json.Marshal(raw)
	}
	return a, true, nil
}

// inputRequests decodes an upstream's input requests for the client; an
// upstream that asks something the protocol has no input request for is
// refused rather than relayed half understood.
func inputRequests(ir *gateway.InputRequired) (mcp.InputRequests, error) {
	var reqs mcp.InputRequests
	if err := json.Unmarshal(ir.Requests, &reqs); err != nil || len(reqs) == 0 {
		return nil, fmt.Errorf("the upstream answered input_required with input requests the gateway cannot relay (%v)", err)
	}
	return reqs, nil
}

func truncateBytes(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "..."
	}
	return string(b)
}
