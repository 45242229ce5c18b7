package upstream

import (
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sync/atomic"
	"time"
)

// tooLargeFlagKey carries a per-call flag that a capped body sets, because
// mcp-go's SSE reader swallows the read error and reports only "unexpected
// nil response".
type tooLargeFlagKey struct{}

func withTooLargeFlag(ctx context.Context, flag *atomic.Bool) context.Context {
	return context.WithValue(ctx, tooLargeFlagKey{}, flag)
}

// cappedTransport limits how much of an upstream HTTP response the gateway
// reads: a JSON body as a whole, an event stream per event (a long-lived
// stream is fine; one huge event is not).
type cappedTransport struct {
	base     http.RoundTripper
	max      int64
	activity *atomic.Int64 // set when response bytes arrive (nil: not recorded)
}

func (t *cappedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	flag, _ := req.Context().Value(tooLargeFlagKey{}).(*atomic.Bool)
	resp.Body = &cappedBody{rc: resp.Body, max: t.max, perEvent: mt == "text/event-stream", flag: flag, activity: t.activity}
	return resp, nil
}

type cappedBody struct {
	rc       io.ReadCloser
	max      int64
	perEvent bool
	n        int64 // bytes in the current body or event
	lastNL   bool  // previous byte was '\n' (a blank line ends an SSE event)
	flag     *atomic.Bool
	activity *atomic.Int64
}

func (b *cappedBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if n > 0 && b.activity != nil {
		b.activity.Store(time.Now().UnixNano())
	}
	if b.perEvent {
		for _, c := range p[:n] {
			if c == '\r' {
				continue
			}
			if c == '\n' && b.lastNL {
				b.n = 0
			} else {
				b.n++
			}
			b.lastNL = c == '\n'
		}
	} else {
		b.n += int64(n)
	}
	if b.n > b.max {
		if b.flag != nil {
			b.flag.Store(true)
		}
		return 0, fmt.Errorf("%w (%d bytes)", ErrResultTooLarge, b.max)
	}
	return n, err
}

func (b *cappedBody) Close() error { return b.rc.Close() }
