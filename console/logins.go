package console

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/gateway"
)

// Signing the operator in to an upstream that takes an OAuth login, from
// the servers page: the console starts Gateway.Login, shows the
// authorization URL it is given as a link, and the page follows the login
// to its end. The authorization server redirects to a loopback address of
// the gateway's host (as for `sandbox login`), so the link works from a
// browser on that host.

const loginWait = 5 * time.Minute // the person's time to finish in the browser

type login struct {
	URL     string // the authorization URL, once the gateway has it
	Done    bool
	Err     string
	Started time.Time
}

type logins struct {
	mu sync.Mutex
	m  map[string]*login // by server
}

func (l *logins) get(server string) (login, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if v, ok := l.m[server]; ok {
		return *v, true
	}
	return login{}, false
}

// startLogin starts the operator's login to server, unless one is under
// way, and waits a little for its authorization URL (or its failure).
func (c *Console) startLogin(ctx context.Context, server string, by auth.Principal) {
	c.logins.mu.Lock()
	if cur, ok := c.logins.m[server]; ok && !cur.Done {
		c.logins.mu.Unlock()
		return
	}
	l := &login{Started: time.Now()}
	if c.logins.m == nil {
		c.logins.m = map[string]*login{}
	}
	c.logins.m[server] = l
	c.logins.mu.Unlock()
	shown := make(chan struct{})
	var once sync.Once
	c.opts.Logger.Info("console: an OAuth login to an upstream started", "server", server, "by", by.Key())
	go func() {
		lctx, cancel := context.WithTimeout(c.ctx, loginWait)
		defer cancel()
		_, err := c.opts.Gateway.Login(lctx, server, gateway.LoginOptions{Owner: auth.Operator().Key(), Wait: loginWait, Show: func(u string) {
			c.logins.mu.Lock()
			l.URL = u
			c.logins.mu.Unlock()
			once.Do(func() { close(shown) })
			c.hub.notify(topicServers)
		}})
		c.logins.mu.Lock()
		l.Done = true
		if err != nil {
			l.Err = err.Error()
		}
		c.logins.mu.Unlock()
		once.Do(func() { close(shown) })
		c.hub.notify(topicServers)
	}()
	select {
	case <-shown:
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
	}
}

// serversPost is the servers page's form: sign the operator in to one.
func (c *Console) serversPost(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	if r.PostForm.Get("action") != "login" {
		http.Error(w, `action must be "login"`, http.StatusBadRequest)
		return
	}
	server := r.PostForm.Get("server")
	c.startLogin(r.Context(), server, p)
	w.Header().Set("Location", "servers")
	w.WriteHeader(http.StatusSeeOther)
}
