package mcphttp

import (
	"io"
	"net/http"
	"sync/atomic"
	"time"
)

// NoDrain wraps a handler so that an HTTP/1 request whose body was not read
// to its end is answered at once and ends its connection, instead of
// waiting for the rest of a body that may never come.
//
// Answering such a request, net/http first drains the body (up to 256 KiB)
// and only then writes the answer, and drains it again once the handler
// returns, with no read deadline (a server that wants long-lived streams
// cannot set a ReadTimeout). So a client that announces a body and stops
// sending it would never get a refusal written before the body is read (a
// 401, a 503 for a full byte budget, a 403 for a foreign Host), and would
// hold the connection and the goroutine serving it for as long as it
// likes, unauthenticated. Until the body reaches its end, the answer says
// Connection: close (net/http then writes it without draining first), and
// once the handler returns the rest is read for at most lingerRead. A body
// read to its end keeps the connection for the next request. HTTP/2 does not drain,
// and there Connection: close would end every stream of the connection, so
// it is left alone.
func NoDrain(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor != 1 || r.ContentLength == 0 || r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		body := &endWatcher{ReadCloser: r.Body}
		w.Header().Set("Connection", "close")
		body.onEnd = func() { w.Header().Del("Connection") }
		// The handler gets a copy: net/http still holds the request it
		// made, and judges by its own body whether the connection is
		// closed with a pause (so that a client still sending reads the
		// answer before the reset that unread bytes bring).
		inner := *r
		inner.Body = body
		defer func() {
			if !body.ended.Load() {
				_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(lingerRead))
			}
		}()
		next.ServeHTTP(w, &inner)
	})
}

// lingerRead is how long net/http may go on reading a refused request's
// body once the answer is written, looking for its end (at most 256 KiB):
// a client that sends its body at once, refused before it was read (a 401
// for a stale token), has sent it by then, and the connection closes with
// nothing unread, so its answer is not lost to a reset; a client that
// stalls holds the connection this long, not for good.
const lingerRead = time.Second

// endWatcher notes when a body has been read to its end.
type endWatcher struct {
	io.ReadCloser
	ended atomic.Bool
	onEnd func()
}

func (b *endWatcher) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.ended.Swap(true) {
		b.onEnd()
	}
	return n, err
}
