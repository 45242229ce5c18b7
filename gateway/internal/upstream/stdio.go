package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"sync"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/sandboxrt/sandbox/gateway/internal/jsonscan"
	"github.com/sandboxrt/sandbox/internal/jsonstream"
)

// stdioTransport is mcp-go's transport.BidirectionalInterface over a stdio
// server's pipes, in place of mcp-go's own stdio transport (transport.NewIO)
// on the path every tool call takes. It behaves as mcp-go's does: lines
// that are not JSON-RPC are skipped, notifications are handled on the
// reading goroutine in the order they came (so a call's progress comes
// before its answer), requests from the server are each answered on a
// goroutine of their own under Start's context, and an answer goes to the
// request waiting for its id. What differs is the cost of an answer: the
// line reader's own copy of it is checked once and split (splitMessage),
// its result left in place and its id matched from its bytes, where
// mcp-go copies the line three times and decodes it twice (and its id four
// times); and a request whose params are already encoded (Conn.newRequest)
// is framed around them rather than re-encoded.
type stdioTransport struct {
	in  *lineReader    // the server's stdout (process.go)
	out io.WriteCloser // the server's stdin
	log *slog.Logger   // the transport's chatter: a write that failed

	outMu sync.Mutex // one line on the pipe at a time

	mu sync.Mutex
	// The requests waiting for their answers: by their id when it is a
	// string (what the gateway sends), else by RequestId.String (which
	// tells 5 from "5").
	waitingByString, waitingByOther map[string]chan *transport.JSONRPCResponse

	done      chan struct{} // closed when the server's stdout ends or Close
	closeOnce sync.Once

	handlerMu      sync.RWMutex
	onNotification func(mcp.JSONRPCNotification)
	onRequest      transport.RequestHandler
	ctx            context.Context // Start's: requests from the server are answered under it

	startOnce sync.Once
}

var _ transport.BidirectionalInterface = (*stdioTransport)(nil)

func newStdioTransport(in *lineReader, out io.WriteCloser, log *slog.Logger) *stdioTransport {
	return &stdioTransport{in: in, out: out, log: log,
		waitingByString: map[string]chan *transport.JSONRPCResponse{}, waitingByOther: map[string]chan *transport.JSONRPCResponse{},
		done: make(chan struct{}), ctx: context.Background()}
}

// Start starts reading the server's stdout (once).
func (t *stdioTransport) Start(ctx context.Context) error {
	t.startOnce.Do(func() {
		t.handlerMu.Lock()
		t.ctx = ctx
		t.handlerMu.Unlock()
		go t.read()
	})
	return nil
}

func (t *stdioTransport) closeDone() { t.closeOnce.Do(func() { close(t.done) }) }

// Close stops the transport and closes the server's stdin (the process
// itself is the connection's to stop: process.stop).
func (t *stdioTransport) Close() error {
	t.closeDone()
	if err := t.out.Close(); err != nil && !errors.Is(err, fs.ErrClosed) {
		return fmt.Errorf("failed to close stdin: %w", err)
	}
	return nil
}

// GetSessionId is "": stdio has no sessions.
func (t *stdioTransport) GetSessionId() string { return "" }

func (t *stdioTransport) SetNotificationHandler(h func(mcp.JSONRPCNotification)) {
	t.handlerMu.Lock()
	t.onNotification = h
	t.handlerMu.Unlock()
}

func (t *stdioTransport) SetRequestHandler(h transport.RequestHandler) {
	t.handlerMu.Lock()
	t.onRequest = h
	t.handlerMu.Unlock()
}

// read hands on each line of the server's stdout until it ends, which ends
// every request still waiting (ErrTransportClosed).
func (t *stdioTransport) read() {
	defer t.closeDone()
	for {
		line, err := t.in.next()
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, fs.ErrClosed) && !errors.Is(err, context.Canceled) {
				t.log.Error("Error reading from stdout", "err", err)
			}
			return
		}
		select {
		case <-t.done:
			return
		default:
		}
		t.dispatch(line)
	}
}

// incoming is every member of a JSON-RPC message that tells what it is,
// and all of a response.
type incoming struct {
	JSONRPC string                   `json:"jsonrpc"`
	ID      json.RawMessage          `json:"id"`
	Method  string                   `json:"method"`
	Result  json.RawMessage          `json:"result"`
	Error   *mcp.JSONRPCErrorDetails `json:"error"`
}

// dispatch handles one line: a response goes to its request, a
// notification to the handler, a request from the server is answered.
func (t *stdioTransport) dispatch(line []byte) {
	m, ok := splitMessage(line)
	if !ok {
		if err := json.Unmarshal(line, &m); err != nil {
			// Not JSON, or a member of a type JSON-RPC does not allow
			// ("error" that is not an object, say): mcp-go would still
			// take a notification or a request whose other members are
			// right.
			t.dispatchSlowly(line)
			return
		}
	}
	hasID := len(m.ID) > 0 && string(m.ID) != "null"
	switch {
	case m.Method != "" && !hasID:
		t.notify(line)
	case m.Method != "" && t.request(line):
	case !hasID:
		// A response to no request: nobody waits for it.
	default:
		// (The id goes in as the request's own: SendRequest.)
		if ch, ok := t.takeRaw(m.ID); ok {
			ch <- &transport.JSONRPCResponse{JSONRPC: m.JSONRPC, Result: m.Result, Error: m.Error} // buffered: never blocks
		}
	}
}

// takeRaw finds and forgets the request waiting for the id raw (as the
// server wrote it), as mcp-go matches ids (RequestId's reading); a plain
// string id, as the gateway's are, is looked up without decoding or
// allocating.
func (t *stdioTransport) takeRaw(raw []byte) (chan *transport.JSONRPCResponse, bool) {
	if n := len(raw); n >= 2 && raw[0] == '"' && raw[n-1] == '"' && plainASCII(raw[1:n-1]) {
		t.mu.Lock()
		defer t.mu.Unlock()
		ch, ok := t.waitingByString[string(raw[1:n-1])]
		if ok {
			delete(t.waitingByString, string(raw[1:n-1]))
		}
		return ch, ok
	}
	var id mcp.RequestId
	if id.UnmarshalJSON(raw) != nil {
		return nil, false // not an id JSON-RPC allows: the line is not JSON-RPC
	}
	return t.take(id)
}

// take finds and forgets the request waiting for id.
func (t *stdioTransport) take(id mcp.RequestId) (chan *transport.JSONRPCResponse, bool) {
	waiting, key := t.waitingFor(id)
	t.mu.Lock()
	defer t.mu.Unlock()
	ch, ok := waiting[key]
	delete(waiting, key)
	return ch, ok
}

// waitingFor is the map and key a request of id waits under.
func (t *stdioTransport) waitingFor(id mcp.RequestId) (map[string]chan *transport.JSONRPCResponse, string) {
	if s, ok := id.Value().(string); ok {
		return t.waitingByString, s
	}
	return t.waitingByOther, id.String()
}

// plainASCII reports whether a string's bytes, between its quotes, are
// printable ASCII without escapes: what they say is what they are.
func plainASCII(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// dispatchSlowly reads a line that did not decode as a whole as mcp-go's
// transport would: by what it can make of its id and method alone.
func (t *stdioTransport) dispatchSlowly(line []byte) {
	var base struct {
		JSONRPC string         `json:"jsonrpc"`
		ID      *mcp.RequestId `json:"id,omitempty"`
		Method  string         `json:"method,omitempty"`
	}
	if json.Unmarshal(line, &base) != nil {
		return
	}
	switch {
	case base.Method != "" && base.ID == nil:
		t.notify(line)
	case base.Method != "" && t.request(line):
	default:
		var resp transport.JSONRPCResponse
		if json.Unmarshal(line, &resp) == nil {
			if ch, ok := t.take(resp.ID); ok {
				ch <- &resp
			}
		}
	}
}

// notify runs the notification handler, on this goroutine: the next line
// is read after it returns.
func (t *stdioTransport) notify(line []byte) {
	var n mcp.JSONRPCNotification
	if json.Unmarshal(line, &n) != nil {
		return
	}
	t.handlerMu.RLock()
	defer t.handlerMu.RUnlock()
	if t.onNotification != nil {
		t.onNotification(n)
	}
}

// request answers a request from the server on a goroutine of its own;
// false when the line is not a request after all.
func (t *stdioTransport) request(line []byte) bool {
	var req transport.JSONRPCRequest
	if json.Unmarshal(line, &req) != nil {
		return false
	}
	t.handlerMu.RLock()
	handler, ctx := t.onRequest, t.ctx
	t.handlerMu.RUnlock()
	if handler == nil {
		t.respond(*transport.NewJSONRPCErrorResponse(req.ID, mcp.METHOD_NOT_FOUND, "No request handler configured", nil))
		return true
	}
	go func() {
		if err := ctx.Err(); err != nil {
			t.respond(*transport.NewJSONRPCErrorResponse(req.ID, mcp.INTERNAL_ERROR, err.Error(), nil))
			return
		}
		resp, err := handler(ctx, req)
		if err != nil {
			t.respond(*transport.NewJSONRPCErrorResponse(req.ID, mcp.INTERNAL_ERROR, err.Error(), nil))
			return
		}
		if resp != nil {
			t.respond(*resp)
		}
	}()
	return true
}

// respond writes the answer to a request from the server.
func (t *stdioTransport) respond(resp transport.JSONRPCResponse) {
	b, err := json.Marshal(resp)
	if err != nil {
		t.log.Error("Error marshaling response", "err", err)
		return
	}
	if err := t.write(append(b, '\n')); err != nil {
		t.log.Error("Error writing response", "err", err)
	}
}

func (t *stdioTransport) write(line []byte) error {
	t.outMu.Lock()
	defer t.outMu.Unlock()
	_, err := t.out.Write(line)
	return err
}

// SendRequest writes a request and waits for its answer, the transport's
// end, or ctx's.
func (t *stdioTransport) SendRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	select {
	case <-t.done:
		return nil, transport.ErrTransportClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	default:
	}
	line, err := encodeRequest(req)
	if err != nil {
		return nil, fmt.Errorf("failed to marshal request: %w", err)
	}
	waiting, key := t.waitingFor(req.ID)
	ch := make(chan *transport.JSONRPCResponse, 1)
	t.mu.Lock()
	waiting[key] = ch
	t.mu.Unlock()
	forget := func() {
		t.mu.Lock()
		delete(waiting, key)
		t.mu.Unlock()
	}
	if err := t.write(line); err != nil {
		forget()
		return nil, fmt.Errorf("failed to write request: %w", err)
	}
	select {
	case resp := <-ch:
		resp.ID = req.ID
		return resp, nil
	case <-t.done:
		select { // an answer read just before the server's stdout ended
		case resp := <-ch:
			resp.ID = req.ID
			return resp, nil
		default:
		}
		forget()
		return nil, transport.ErrTransportClosed
	case <-ctx.Done():
		forget()
		return nil, ctx.Err()
	}
}

// SendNotification writes a notification.
func (t *stdioTransport) SendNotification(ctx context.Context, n mcp.JSONRPCNotification) error {
	select {
	case <-t.done:
		return transport.ErrTransportClosed
	case <-ctx.Done():
		return ctx.Err()
	default:
	}
	b, err := json.Marshal(n)
	if err != nil {
		return fmt.Errorf("failed to marshal notification: %w", err)
	}
	if err := t.write(append(b, '\n')); err != nil {
		return fmt.Errorf("failed to write notification: %w", err)
	}
	return nil
}

// encodeRequest is req as one line, as json.Marshal writes it. Params the
// connection encoded already (json.RawMessage, from json.Marshal: compact,
// HTML-escaped, one line) are framed as they are rather than scanned and
// copied again.
func encodeRequest(req transport.JSONRPCRequest) ([]byte, error) {
	params, ok := req.Params.(json.RawMessage)
	if !ok || len(params) == 0 || bytes.IndexByte(params, '\n') >= 0 {
		b, err := json.Marshal(req)
		return append(b, '\n'), err
	}
	b := make([]byte, 0, len(`{"jsonrpc":"","id":,"method":"","params":}`)+len(req.JSONRPC)+len(req.Method)+len(params)+32)
	b = append(b, `{"jsonrpc":`...)
	b = appendJSONString(b, req.JSONRPC)
	b = append(b, `,"id":`...)
	if s, ok := req.ID.Value().(string); ok {
		b = appendJSONString(b, s)
	} else {
		id, err := json.Marshal(req.ID)
		if err != nil {
			return nil, err
		}
		b = append(b, id...)
	}
	b = append(b, `,"method":`...)
	b = appendJSONString(b, req.Method)
	b = append(b, `,"params":`...)
	b = append(b, params...)
	return append(b, "}\n"...), nil
}

// appendJSONString appends s as json.Marshal encodes it.
func appendJSONString(b []byte, s string) []byte {
	return append(jsonstream.AppendStringBody(append(b, '"'), s), '"')
}

// splitMessage reads a line as json.Unmarshal into incoming does, in one
// pass that checks it is JSON and one that finds its top-level members,
// with the result left in place (a slice of line) rather than scanned
// again and copied. ok is false for anything but the plain case (not
// JSON; a key with escapes, in another case or twice; a string member
// with escapes or not ASCII; a member of another type), which
// json.Unmarshal then reads.
func splitMessage(line []byte) (m incoming, ok bool) {
	if !json.Valid(line) {
		return m, false
	}
	var seen jsonscan.Fields
	ok = jsonscan.Members(line, func(key, value []byte) bool {
		var plain bool
		switch string(key) {
		case "jsonrpc":
			m.JSONRPC, plain = jsonscan.PlainString(value)
			return plain && seen.First(0)
		case "id":
			m.ID = value
			return seen.First(1)
		case "method":
			m.Method, plain = jsonscan.PlainString(value)
			return plain && seen.First(2)
		case "result":
			m.Result = value
			return seen.First(3)
		case "error":
			if string(value) != "null" {
				m.Error = new(mcp.JSONRPCErrorDetails)
				if json.Unmarshal(value, m.Error) != nil {
					return false
				}
			}
			return seen.First(4)
		}
		return jsonscan.OtherKey(key, "jsonrpc", "id", "method", "result", "error")
	})
	return m, ok
}
