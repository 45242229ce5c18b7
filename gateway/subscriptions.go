package gateway

import (
	"context"
	"encoding/json"
	"sort"

	"github.com/mark3labs/mcp-go/mcp"
)

// Resource subscriptions: a session subscribes to a URI; the gateway
// subscribes upstream on the first session and unsubscribes on the last,
// and forwards notifications/resources/updated only to the sessions that
// subscribed.

// SubscribeResource subscribes a session to updates of a resource.
func (g *Gateway) SubscribeResource(ctx context.Context, session SessionID, uri string) error {
	u, err := g.resourceOwner(uri)
	if err != nil {
		return err
	}
	g.subsMu.Lock()
	first := len(g.subs[uri]) == 0
	if g.subs[uri] == nil {
		g.subs[uri] = map[SessionID]bool{}
	}
	g.subs[uri][session] = true
	g.subsMu.Unlock()
	if !first {
		return nil
	}
	if c := u.conn.Load(); c != nil {
		return c.subscribe(ctx, uri, true)
	}
	return nil
}

// UnsubscribeResource ends a session's subscription (a no-op when absent).
func (g *Gateway) UnsubscribeResource(ctx context.Context, session SessionID, uri string) error {
	g.subsMu.Lock()
	subs := g.subs[uri]
	had := subs[session]
	delete(subs, session)
	last := had && len(subs) == 0
	if len(subs) == 0 {
		delete(g.subs, uri)
	}
	g.subsMu.Unlock()
	if !last {
		return nil
	}
	u, err := g.resourceOwner(uri)
	if err != nil {
		return nil
	}
	if c := u.conn.Load(); c != nil {
		return c.subscribe(ctx, uri, false)
	}
	return nil
}

func (g *Gateway) dropSessionSubscriptions(session SessionID) {
	g.subsMu.Lock()
	var orphaned []string
	for uri, subs := range g.subs {
		if subs[session] {
			delete(subs, session)
			if len(subs) == 0 {
				delete(g.subs, uri)
				orphaned = append(orphaned, uri)
			}
		}
	}
	g.subsMu.Unlock()
	for _, uri := range orphaned {
		if u, err := g.resourceOwner(uri); err == nil {
			if c := u.conn.Load(); c != nil {
				go func() { _ = c.subscribe(g.ctx, uri, false) }()
			}
		}
	}
}

// subscribedURIs lists the URIs of one server that some session subscribed to.
func (g *Gateway) subscribedURIs(server string) []string {
	g.subsMu.Lock()
	uris := make([]string, 0, len(g.subs))
	for uri := range g.subs {
		uris = append(uris, uri)
	}
	g.subsMu.Unlock()
	var out []string
	for _, uri := range uris {
		if u, err := g.resourceOwner(uri); err == nil && u.name == server {
			out = append(out, uri)
		}
	}
	sort.Strings(out)
	return out
}

// resourceUpdated forwards notifications/resources/updated to subscribers.
func (g *Gateway) resourceUpdated(server, uri string, params json.RawMessage) {
	g.subsMu.Lock()
	sessions := make([]SessionID, 0, len(g.subs[uri]))
	for s := range g.subs[uri] {
		sessions = append(sessions, s)
	}
	g.subsMu.Unlock()
	for _, s := range sessions {
		if p := g.peer(s); p != nil {
			p.Notify(string(mcp.MethodNotificationResourceUpdated), params)
		}
	}
}
