package frontend

import (
	"context"
	"io"
	"log"
	"log/slog"
	"sync"

	"github.com/mark3labs/mcp-go/server"
)

// ServeStdio serves one client on in/out (newline-delimited JSON-RPC) until
// in ends or ctx is cancelled. Notifications of a call are written straight
// to out, in order, before the call's response. mcp-go keeps one stdio
// session per process, so serve stdio once per process.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	w := &lockedWriter{w: out}
	ss := server.NewStdioServer(s.mcp)
	ss.SetErrorLogger(log.New(slogWriter{s.log}, "", 0))
	ss.SetContextFunc(func(ctx context.Context) context.Context {
		return context.WithValue(ctx, notifierKey{}, notifier(w))
	})
	return ss.Listen(ctx, in, w)
}

// lockedWriter makes each Write atomic, so the notifications written by the
// front end and the responses written by mcp-go never interleave.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) send(msg []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, err := l.w.Write(append(msg, '\n')); err != nil {
		return err
	}
	return nil
}

// slogWriter sends mcp-go's log.Logger output to slog at Warn.
type slogWriter struct{ l *slog.Logger }

func (s slogWriter) Write(p []byte) (int, error) {
	s.l.Warn("mcp-go", "message", string(p))
	return len(p), nil
}
