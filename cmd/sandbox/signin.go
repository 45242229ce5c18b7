package main

import (
	"log/slog"
	"net"
	"net/http"

	"github.com/sandboxrt/sandbox/config"
	"github.com/sandboxrt/sandbox/gateway"
)

// installSignIn serves the pages where a principal signs itself in to an
// upstream server from inside a call (URL-mode elicitation, gateway's
// oauth_signin.go) at /oauth/ of the listener. It needs principals
// ("gateway.auth") and an address browsers reach: "gateway.publicURL", or
// the listener's own when it is loopback (a listener on 0.0.0.0 has no
// address to give a browser). Without them, principals are told to ask the
// operator, as before.
func installSignIn(mux *http.ServeMux, file *config.File, protect func(http.Handler) http.Handler, g *gateway.Gateway, addr net.Addr, log *slog.Logger) error {
	if !file.Auth.Enabled() {
		return nil
	}
	public := file.PublicURL
	if public == "" {
		if !loopbackAddr(addr.String()) {
			log.Info(`principals cannot sign themselves in to OAuth servers from a call: set "gateway.publicURL" to where browsers reach this listener`)
			return nil
		}
		public = "http://" + addr.String()
	}
	h, err := g.SignInHandler(gateway.SignInOptions{PublicURL: public, Authenticate: protect})
	if err != nil {
		return err
	}
	mux.Handle("/oauth/", h)
	return nil
}
