package console

import (
	"net/http"
	"net/url"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/codemode"
)

// The scripts page: every principal's saved scripts (code, description,
// whether shared), and the operator's acts on them through the engine
// (Engine.ShareScript, Engine.RemoveScript), each audited as the
// operator's.

type scriptsData struct {
	CodeMode bool
	Owner    string   // the owner shown ("": all)
	Owners   []string // every owner with scripts
	Scripts  []codemode.Script
	Error    string
}

func (c *Console) scripts(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	d := scriptsData{CodeMode: c.opts.Engine != nil, Owner: r.URL.Query().Get("owner")}
	if !d.CodeMode {
		c.render(w, r, "scripts", page{Title: "Saved scripts", Nav: "scripts", Data: d}, &p)
		return
	}
	by := auth.Caller{Principal: p, Session: "console"}
	msg := ""
	if r.Method == http.MethodPost {
		owner, name := r.PostForm.Get("owner"), r.PostForm.Get("name")
		var err error
		switch r.PostForm.Get("action") {
		case "share", "unshare":
			err = c.opts.Engine.ShareScript(r.Context(), by, owner, name, r.PostForm.Get("action") == "share")
		case "delete":
			var deleted bool
			if deleted, err = c.opts.Engine.RemoveScript(r.Context(), by, owner, name); err == nil && !deleted {
				msg = owner + " has no script " + name + " any more."
			}
		default:
			http.Error(w, `action must be "share", "unshare" or "delete"`, http.StatusBadRequest)
			return
		}
		if err != nil {
			msg = err.Error()
		}
		if msg == "" {
			c.opts.Logger.Info("console: script changed", "action", r.PostForm.Get("action"), "owner", owner, "name", name, "by", p.Key())
			w.Header().Set("Location", "scripts?owner="+url.QueryEscape(d.Owner))
			w.WriteHeader(http.StatusSeeOther)
			return
		}
	}
	all, err := c.opts.Engine.Scripts(r.Context())
	if err != nil {
		d.Error = "the saved scripts could not be read: " + err.Error()
	}
	owners := map[string]bool{}
	for _, s := range all {
		owners[s.Owner] = true
		if d.Owner == "" || s.Owner == d.Owner {
			d.Scripts = append(d.Scripts, s)
		}
	}
	d.Owners = sortedKeys(owners)
	c.render(w, r, "scripts", page{Title: "Saved scripts", Nav: "scripts", Message: msg, Data: d}, &p)
}
