package conformancefixture

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Resource URIs the scenarios read or subscribe to.
const (
	StaticTextURI      = "test://static-text"
	StaticBinaryURI    = "test://static-binary"
	WatchedResourceURI = "test://watched-resource"
	TemplateURI        = "test://template/{id}/data"
)

func (f *fixture) addResources() {
	f.srv.AddResource(mcp.NewResource(StaticTextURI, "static-text",
		mcp.WithResourceTitle("Static text"),
		mcp.WithResourceDescription("A fixed text resource (resources-read-text)."),
		mcp.WithMIMEType("text/plain")),
		func(context.Context, mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{mcp.TextResourceContents{
				URI: StaticTextURI, MIMEType: "text/plain", Text: "This is the content of the static text resource.",
			}}, nil
		})
	f.srv.AddResource(mcp.NewResource(StaticBinaryURI, "static-binary",
		mcp.WithResourceTitle("Static binary"),
		mcp.WithResourceDescription("A 1x1 red PNG as a blob resource (resources-read-binary)."),
		mcp.WithMIMEType("image/png")),
		func(context.Context, mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{mcp.BlobResourceContents{URI: StaticBinaryURI, MIMEType: "image/png", Blob: redPixelPNG}}, nil
		})
	f.srv.AddResource(mcp.NewResource(WatchedResourceURI, "watched-resource",
		mcp.WithResourceTitle("Watched resource"),
		mcp.WithResourceDescription("A resource to subscribe to; test_update_watched_resource changes it and notifies subscribers."),
		mcp.WithMIMEType("text/plain")),
		func(context.Context, mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			f.mu.Lock()
			v := f.watchedVersion
			f.mu.Unlock()
			return []mcp.ResourceContents{mcp.TextResourceContents{
				URI: WatchedResourceURI, MIMEType: "text/plain", Text: fmt.Sprintf("Watched resource, version %d.", v),
			}}, nil
		})
	f.srv.AddResourceTemplate(mcp.NewResourceTemplate(TemplateURI, "template-data",
		mcp.WithTemplateTitle("Template data"),
		mcp.WithTemplateDescription("JSON data for any id; the id from the URI is substituted into the content (resources-templates-read)."),
		mcp.WithTemplateMIMEType("application/json")),
		func(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			id := templateArg(req.Params.Arguments["id"])
			if id == "" {
				return nil, fmt.Errorf("%w: %s has an empty {id}; read e.g. test://template/123/data", server.ErrResourceNotFound, req.Params.URI)
			}
			text, err := json.Marshal(map[string]any{"id": id, "templateTest": true, "data": "Data for ID: " + id})
			if err != nil {
				return nil, err
			}
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, MIMEType: "application/json", Text: string(text)}}, nil
		})
}

// templateArg flattens a URI-template variable, which mcp-go hands over as a
// string or a list of strings.
func templateArg(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []string:
		if len(x) > 0 {
			return x[0]
		}
	case []any:
		if len(x) > 0 {
			return fmt.Sprint(x[0])
		}
	}
	return ""
}

// subscribe records that session wants notifications/resources/updated for
// uri: from resources/subscribe on 2025 sessions, from the filter of
// subscriptions/listen on protocol 2026-07-28.
func (f *fixture) subscribe(session server.ClientSession, uri string) {
	if session == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.subscribers[uri] == nil {
		f.subscribers[uri] = map[server.ClientSession]struct{}{}
	}
	f.subscribers[uri][session] = struct{}{}
}

func (f *fixture) unsubscribe(session server.ClientSession, uri string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.subscribers[uri], session)
}

func (f *fixture) forgetSession(session server.ClientSession) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, subs := range f.subscribers {
		for s := range subs {
			if s == session || s.SessionID() != "" && s.SessionID() == session.SessionID() {
				delete(subs, s)
			}
		}
	}
}

// bumpWatched changes the watched resource and returns its new version and
// the sessions subscribed to it.
func (f *fixture) bumpWatched() (int, []server.ClientSession) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.watchedVersion++
	sessions := make([]server.ClientSession, 0, len(f.subscribers[WatchedResourceURI]))
	for s := range f.subscribers[WatchedResourceURI] {
		sessions = append(sessions, s)
	}
	return f.watchedVersion, sessions
}
