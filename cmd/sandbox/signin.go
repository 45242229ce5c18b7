package main

import (
	"log/slog"
	"net"
	"net/http"

	"github.com/sandboxrt/sandbox/config"
	"github.com/sandboxrt/sandbox/console"
	"github.com/sandboxrt/sandbox/gateway"
)

// installSignIn serves the pages a principal is sent to by URL-mode
// elicitation: where it signs itself in to an upstream server from inside
// a call (gateway's oauth_signin.go) at /oauth/ of the listener, and where
// it approves or denies its own call (console's approvalpage.go) at
// /approve/. It needs principals
// ("gateway.auth") and an address browsers reach: "gateway.publicURL", or
// the listener's own when it is loopback (a listener on 0.0.0.0 has no
// address to give a browser). Without them, principals are told to ask the
// operator, as before. pageKey signs the approval page's cookies (nil: a
// key of this process's own; with shared state, every replica's).
func installSignIn(mux *http.ServeMux, file *config.File, protect func(http.Handler) http.Handler, g *gateway.Gateway, addr net.Addr, allowHosts []string, pageKey []byte, log *slog.Logger) error {
	if !file.Auth.Enabled() {
		return nil
	}
	public := file.PublicURL
	if public == "" {
		if !loopbackAddr(addr.String()) {
			log.Info(`principals cannot sign themselves in to OAuth servers from a call, nor approve their calls on a page: set "gateway.publicURL" to where browsers reach this listener`)
			return nil
		}
		public = "http://" + addr.String()
	}
	h, err := g.SignInHandler(gateway.SignInOptions{PublicURL: public, Authenticate: protect})
	if err != nil {
		return err
	}
	mux.Handle("/oauth/", h)
	mux.Handle("/approve/", http.StripPrefix("/approve", console.NewApprovalPage(console.ApprovalPageOptions{Gateway: g, Authenticate: protect, AllowedHosts: allowHosts, Secret: pageKey})))
	g.SetApprovalPage(public + "/approve")
	return nil
}
