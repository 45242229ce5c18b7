package auth

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
)

// WellKnownPath is where a protected resource publishes its metadata
// (RFC 9728 §3), followed by the resource's own path when it has one.
const WellKnownPath = "/.well-known/oauth-protected-resource"

// ProtectedResourceMetadata is the RFC 9728 document of the MCP endpoint:
// the MCP authorization spec has clients read it (from WWW-Authenticate's
// resource_metadata, or the well-known URLs) to find the authorization
// server to get a token from.
type ProtectedResourceMetadata struct {
	Resource               string   `json:"resource"`
	AuthorizationServers   []string `json:"authorization_servers"`
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
	ScopesSupported        []string `json:"scopes_supported,omitempty"`
}

// Metadata returns the document for the configuration.
func (o OAuthConfig) Metadata() ProtectedResourceMetadata {
	return ProtectedResourceMetadata{
		Resource:               o.Resource(),
		AuthorizationServers:   []string{o.Issuer},
		BearerMethodsSupported: []string{"header"},
		ScopesSupported:        o.Scopes,
	}
}

// MetadataURL returns the URL of a resource's metadata document (RFC 9728
// §3.1): the well-known path inserted between the host and the resource's
// path, "https://h/mcp" -> "https://h/.well-known/oauth-protected-resource/mcp".
// It is the resource_metadata of Middleware's challenges.
func MetadataURL(resource string) string {
	u, err := url.Parse(resource)
	if err != nil {
		return ""
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: WellKnownPath + strings.TrimSuffix(u.Path, "/"), RawQuery: u.RawQuery}).String()
}

// MetadataPaths returns the paths to serve MetadataHandler at on the
// resource's host: the path-suffixed form (MetadataURL's path) and, for
// clients that probe the root form when they find no resource_metadata,
// WellKnownPath itself.
func MetadataPaths(resource string) []string {
	u, err := url.Parse(resource)
	if err != nil {
		return []string{WellKnownPath}
	}
	if p := strings.TrimSuffix(u.Path, "/"); p != "" {
		return []string{WellKnownPath + p, WellKnownPath}
	}
	return []string{WellKnownPath}
}

// MetadataHandler serves the document: to GET and HEAD, as JSON, to any
// origin (browser-based clients fetch it before they hold a token; it holds
// nothing secret). Mount it outside Middleware, at MetadataPaths.
func MetadataHandler(o OAuthConfig) http.Handler {
	body, err := json.Marshal(o.Metadata())
	if err != nil {
		panic(err) // strings only
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", "*")
		if r.Method == http.MethodOptions {
			h.Set("Access-Control-Allow-Methods", "GET, HEAD, OPTIONS")
			h.Set("Access-Control-Allow-Headers", "MCP-Protocol-Version")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			h.Set("Allow", "GET, HEAD, OPTIONS")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		h.Set("Content-Type", "application/json")
		h.Set("Cache-Control", "public, max-age=3600")
		if r.Method == http.MethodGet {
			_, _ = w.Write(body)
		}
	})
}
