package console

import (
	"errors"
	"net/http"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/codemode"
)

// The store page: whose sandbox.store values there are, each principal's
// keys (its own and its sessions') with sizes and expiry, and a value only
// when the operator asks for it with a POST (Engine.ReadStoreValue, which
// audits every read).

type storeData struct {
	CodeMode   bool
	Principals []string
	Principal  string
	Entries    []codemode.StoreEntry
	Error      string
	// The value asked for.
	Shown      *codemode.StoreEntry
	ShownValue string
}

func (c *Console) store(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	d := storeData{CodeMode: c.opts.Engine != nil, Principal: r.URL.Query().Get("principal")}
	if !d.CodeMode {
		c.render(w, r, "store", page{Title: "Stored values", Nav: "store", Data: d}, &p)
		return
	}
	e := c.opts.Engine
	var err error
	if d.Principals, err = e.StorePrincipals(r.Context()); err != nil {
		d.Error = err.Error()
		if !errors.Is(err, codemode.ErrNoStoreInventory) {
			c.opts.Logger.Warn("console: listing the store failed", "error", err)
		}
	}
	if r.Method == http.MethodPost {
		scope := codemode.StoreScope{Principal: r.PostForm.Get("principal"), Session: r.PostForm.Get("session")}
		key := r.PostForm.Get("key")
		d.Principal = scope.Principal
		v, found, err := e.ReadStoreValue(r.Context(), auth.Caller{Principal: p, Session: "console"}, scope, key)
		switch {
		case err != nil:
			d.Error = err.Error()
		case !found:
			d.Error = "no such value: it expired or was deleted"
		default:
			d.Shown, d.ShownValue = &codemode.StoreEntry{Scope: scope, Key: key, Bytes: len(v)}, string(v)
			c.opts.Logger.Info("console: a stored value was read", "principal", scope.Principal, "session", scope.Session, "key", key, "by", p.Key())
		}
	}
	if d.Principal != "" && d.Error == "" || d.Shown != nil {
		if d.Entries, err = e.StoreEntries(r.Context(), d.Principal); err != nil {
			d.Error = err.Error()
		}
	}
	c.render(w, r, "store", page{Title: "Stored values", Nav: "store", Data: d}, &p)
}
