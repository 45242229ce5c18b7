package main

import (
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/config"
	"github.com/sandboxrt/sandbox/gateway"
)

// TestInstallConsole: the console is served at /ui/ unless the config
// turns it off, and beyond loopback only with authentication; serve's
// start-up line links it when it is on.
func TestInstallConsole(t *testing.T) {
	g, err := gateway.New(&gateway.Config{Servers: map[string]*gateway.ServerConfig{}, Settings: gateway.DefaultSettings()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	keys := auth.Config{APIKeys: []auth.APIKey{{Name: "ops", Key: "ops-0123456789abcdef", Operator: true}}}
	for _, c := range []struct {
		name     string
		addr     string
		auth     auth.Config
		disabled bool
		want     string
	}{
		{"loopback, no auth", "127.0.0.1:0", auth.Config{}, false, "/ui/"},
		{"beyond loopback, no auth", "0.0.0.0:8808", auth.Config{}, false, ""},
		{"beyond loopback, with auth", "0.0.0.0:8808", keys, false, "/ui/"},
		{"turned off", "127.0.0.1:0", keys, true, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			file := &config.File{Gateway: &gateway.Config{Settings: gateway.DefaultSettings()}, Auth: c.auth, Console: config.Console{Disabled: c.disabled}}
			mux := http.NewServeMux()
			at, closeFn, err := installConsole(mux, consoleSetup{file: file, serve: serveFlags{httpAddr: c.addr}, gateway: g, log: slog.New(slog.DiscardHandler),
				protect: func(h http.Handler) http.Handler { return h }})
			if err != nil {
				t.Fatal(err)
			}
			defer closeFn()
			if at != c.want {
				t.Fatalf("served at %q, want %q", at, c.want)
			}
			rec := httptest.NewRecorder()
			mux.ServeHTTP(rec, httptest.NewRequest("GET", "/ui", nil))
			served := rec.Code == http.StatusMovedPermanently && rec.Header().Get("Location") == "ui/"
			if served != (c.want != "") {
				t.Errorf("/ui: %d %q", rec.Code, rec.Header().Get("Location"))
			}
			link := consoleURL(at, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8808})
			if (link == "http://127.0.0.1:8808/ui/") != (c.want != "") || (c.want == "" && link != "") {
				t.Errorf("the start-up line's link: %q", link)
			}
		})
	}
}
