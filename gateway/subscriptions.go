package gateway

import (
	"context"
	"encoding/json"
	"sort"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/sandboxrt/sandbox/auth"
)

// Resource subscriptions: a session subscribes to a URI; the gateway
// subscribes upstream on the first session and unsubscribes on the last,
// and forwards notifications/resources/updated only to the sessions that
// subscribed. Each session's URIs are part of its state (sessions.go).

// SubscribeResource subscribes a caller's open session to updates of a
// resource. A caller without an open session cannot subscribe.
func (g *Gateway) SubscribeResource(ctx context.Context, caller auth.Caller, uri string) error {
	if len(uri) > maxSubscribedURI {
		return newError(CodeNotFound, "", nil, map[string]any{"limitBytes": maxSubscribedURI}, "a resource URI of %d bytes cannot be subscribed to (at most %d)", len(uri), maxSubscribedURI)
	}
	u, err := g.resourceOwner(caller, uri)
	if err != nil {
		return err
	}
	if err := g.scope(caller, u.name, ""); err != nil {
		return err
	}
	g.sessions.mu.Lock()
	st := g.sessions.open[caller.Session]
	if !caller.HasSession() || st == nil {
		g.sessions.mu.Unlock()
		return newError(CodeNotFound, "", nil, map[string]any{"uri": uri}, "subscribing needs a session (protocol 2026-07-28 requests have none); read the resource instead")
	}
	if _, again := st.subs[uri]; len(st.subs) >= maxSubscriptions && !again {
		g.sessions.mu.Unlock()
		return newError(CodeRateLimited, "", nil, map[string]any{"limit": maxSubscriptions}, "this session is subscribed to %d resources, the most it may; unsubscribe from some first", maxSubscriptions)
	}
	if prev, again := st.subs[uri]; again && prev != u.name {
		g.sessions.mu.Unlock()
		return nil // subscribed at the server it resolved to first
	}
	first := g.subscribersLocked(u.name, uri) == 0
	st.subs[uri] = u.name
	g.sessions.mu.Unlock()
	if !first {
		return nil
	}
	if c := u.sup.Conn(); c != nil {
		return c.Subscribe(ctx, uri, true)
	}
	return nil
}

// A session's subscriptions are bounded in count and URI size: each costs
// memory here and a filter entry upstream.
const (
	maxSubscriptions = 256
	maxSubscribedURI = 2 << 10
)

// UnsubscribeResource ends a session's subscription (a no-op when absent).
func (g *Gateway) UnsubscribeResource(ctx context.Context, caller auth.Caller, uri string) error {
	g.sessions.mu.Lock()
	st := g.sessions.open[caller.Session]
	var server string
	if caller.HasSession() && st != nil {
		server = st.subs[uri]
	}
	if server == "" {
		g.sessions.mu.Unlock()
		return nil
	}
	delete(st.subs, uri)
	last := g.subscribersLocked(server, uri) == 0
	g.sessions.mu.Unlock()
	if !last {
		return nil
	}
	if c := g.upstreams[server].sup.Conn(); c != nil {
		return c.Subscribe(ctx, uri, false)
	}
	return nil
}

// subscribersLocked counts the open sessions subscribed to uri at server.
func (g *Gateway) subscribersLocked(server, uri string) int {
	n := 0
	for _, st := range g.sessions.open {
		if st.subs[uri] == server {
			n++
		}
	}
	return n
}

// unsubscribeOrphans unsubscribes upstream from the URIs (of a session that
// closed: each to its server) that no open session is subscribed to there
// any more.
func (g *Gateway) unsubscribeOrphans(subs map[string]string) {
	g.sessions.mu.Lock()
	orphaned := map[string]string{}
	for uri, server := range subs {
		if g.subscribersLocked(server, uri) == 0 {
			orphaned[uri] = server
		}
	}
	g.sessions.mu.Unlock()
	for uri, server := range orphaned {
		if c := g.upstreams[server].sup.Conn(); c != nil {
			go func() { _ = c.Subscribe(g.ctx, uri, false) }()
		}
	}
}

// subscribedURIs lists the URIs some session subscribed to at one server.
func (g *Gateway) subscribedURIs(server string) []string {
	g.sessions.mu.Lock()
	set := map[string]bool{}
	for _, st := range g.sessions.open {
		for uri, at := range st.subs {
			if at == server {
				set[uri] = true
			}
		}
	}
	g.sessions.mu.Unlock()
	out := make([]string, 0, len(set))
	for uri := range set {
		out = append(out, uri)
	}
	sort.Strings(out)
	return out
}

// resourceUpdated forwards notifications/resources/updated to subscribers.
func (g *Gateway) resourceUpdated(server, uri string, params json.RawMessage) {
	g.sessions.mu.Lock()
	var peers []Peer
	for _, st := range g.sessions.open {
		// The scope is checked again at delivery: a subscription made before a
		// session narrowed itself must not keep delivering.
		if st.subs[uri] == server && st.peer != nil && st.sees(server) {
			peers = append(peers, st.peer)
		}
	}
	g.sessions.mu.Unlock()
	if len(peers) > 0 {
		params = g.serverSecrets(server).json(params)
	}
	for _, p := range peers {
		p.Notify(string(mcp.MethodNotificationResourceUpdated), params)
	}
}
