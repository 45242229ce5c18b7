package mcphttp

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/mark3labs/mcp-go/server"
)

// Request is r, whose body has been read into body, as mcp-go's Handle
// takes it: mcp-go's ServeHTTP would read (and copy) the body again.
func Request(r *http.Request, body []byte) *server.HTTPRequest {
	return &server.HTTPRequest{Method: r.Method, URL: r.URL, Header: r.Header, Body: body, Context: r.Context()}
}

// ResponseWriter is w as the writer mcp-go's Handle answers on, as its
// ServeHTTP would wrap it: it can stream when w can flush.
func ResponseWriter(w http.ResponseWriter) server.HTTPResponseWriter { return responseWriter{w} }

type responseWriter struct{ http.ResponseWriter }

func (w responseWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w responseWriter) CanStream() bool {
	_, ok := w.ResponseWriter.(http.Flusher)
	return ok
}

// Rebinding returns why a request looks like a DNS-rebinding attempt, or "".
// Only connections that arrived at a loopback address are judged: that is
// where a browser tricked into resolving evil.example to 127.0.0.1 ends up.
// Their Host, and their Origin when they have one, must be a loopback name
// or one of allowed (lower-case host names, for a local reverse proxy).
func Rebinding(r *http.Request, allowed map[string]bool) string {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || local == nil || !loopbackHost(local.String()) {
		return ""
	}
	if !loopbackHost(r.Host) && !allowed[strings.ToLower(hostOnly(r.Host))] {
		return fmt.Sprintf("Forbidden: Host %q is not a loopback name (DNS-rebinding protection); connect to localhost, 127.0.0.1 or [::1]", r.Host)
	}
	if origin := r.Header.Get("Origin"); origin != "" {
		u, err := url.Parse(origin)
		if err != nil || !loopbackHost(u.Host) && !allowed[strings.ToLower(u.Hostname())] {
			return fmt.Sprintf("Forbidden: Origin %q is not a loopback origin (DNS-rebinding protection)", origin)
		}
	}
	return ""
}

func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.Trim(hostport, "[]")
}

func loopbackHost(hostport string) bool {
	h := strings.ToLower(hostOnly(hostport))
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}
