package console

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"sync"
	"time"
)

// Live updates: a page that shows something changing opens an
// EventSource on "events?topic=...". The stream says only that the topic
// changed ("event: change"); the page's script then fetches its fragment
// again (the same server-rendered, escaped HTML a reload shows), so
// nothing upstream reaches the page except through html/template. A
// topic's changes are coalesced to at most one message per minGap.

// Topics.
const (
	topicServers   = "servers"
	topicRuns      = "runs"
	topicRun       = "run:" // + the run's id
	topicApprovals = "approvals"
	topicOverview  = "overview"
)

const (
	minGap         = 150 * time.Millisecond // between two messages of one stream
	heartbeatEvery = 15 * time.Second       // a comment line keeps proxies from closing an idle stream
	maxStreams     = 256                    // open event streams at once; past it a page polls by reloading
)

// hub tells the streams of a topic that it changed.
type hub struct {
	mu   sync.Mutex
	subs map[*subscriber]struct{}
}

type subscriber struct {
	topic   string
	changed chan struct{} // buffered 1: a change pending
}

func newHub() *hub { return &hub{subs: map[*subscriber]struct{}{}} }

// notify marks topic changed for every stream watching it (and the
// overview, which sums up every topic). It never blocks.
func (h *hub) notify(topic string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		if s.topic == topic || s.topic == topicOverview && topic != topicOverview && !isRunTopic(topic) && !isTaskTopic(topic) {
			select {
			case s.changed <- struct{}{}:
			default:
			}
		}
	}
}

// watching reports whether a stream watches a topic that match accepts.
func (h *hub) watching(match func(topic string) bool) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		if match(s.topic) {
			return true
		}
	}
	return false
}

func isRunTopic(t string) bool { return len(t) > len(topicRun) && t[:len(topicRun)] == topicRun }

func (h *hub) subscribe(topic string) (*subscriber, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.subs) >= maxStreams {
		return nil, false
	}
	s := &subscriber{topic: topic, changed: make(chan struct{}, 1)}
	h.subs[s] = struct{}{}
	return s, true
}

func (h *hub) unsubscribe(s *subscriber) {
	h.mu.Lock()
	delete(h.subs, s)
	h.mu.Unlock()
}

// serveEvents is the event stream of one topic.
func (c *Console) serveEvents(w http.ResponseWriter, r *http.Request) {
	topic := r.URL.Query().Get("topic")
	switch {
	case topic == topicServers, topic == topicRuns, topic == topicApprovals, topic == topicOverview:
	case isRunTopic(topic) && len(topic) <= len(topicRun)+64:
	case isTaskTopic(topic) && len(topic) <= len(topicTask)+64:
	default:
		http.Error(w, "unknown topic: use servers, runs, run:<id>, task:<id>, approvals or overview", http.StatusBadRequest)
		return
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "this connection cannot stream", http.StatusInternalServerError)
		return
	}
	sub, ok := c.hub.subscribe(topic)
	if !ok {
		w.Header().Set("Retry-After", "30")
		http.Error(w, "too many open event streams; reload the page later", http.StatusServiceUnavailable)
		return
	}
	defer c.hub.unsubscribe(sub)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, "retry: 2000\n\n")
	flusher.Flush()
	heartbeat := time.NewTicker(heartbeatEvery)
	defer heartbeat.Stop()
	ctx := r.Context()
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.closed:
			return
		case <-heartbeat.C:
			fmt.Fprint(w, ": still here\n\n")
		case <-sub.changed:
			fmt.Fprintf(w, "event: change\ndata: %s\n\n", topic)
			flusher.Flush()
			// Coalesce: changes within minGap become one message.
			select {
			case <-ctx.Done():
				return
			case <-time.After(minGap):
			}
			continue
		}
		flusher.Flush()
	}
}

// watchServers tells the servers topic when what Gateway.Servers reports
// changes (state, tools, errors, restarts): the gateway reports catalog
// changes to subscribers but not every state change, so the console looks
// once a second, which costs a copy of a few structs.
func (c *Console) watchServers(ctx context.Context) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	last := c.opts.Gateway.Servers()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now := c.opts.Gateway.Servers()
		if !reflect.DeepEqual(now, last) {
			last = now
			c.hub.notify(topicServers)
		}
	}
}
