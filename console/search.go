package console

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/codemode"
)

// The search playground: an intent (and more phrasings) in, the answer an
// agent's search_tools gets out, for a chosen principal's scope. It runs
// Engine.Search as that principal, in a session of its own made for the
// one search (so the servers' instructions show, as in an agent's first
// answer, and no agent session learns from it).

type searchData struct {
	CodeMode   bool
	Principals []string // "" is the operator: every server
	Principal  string
	Intent     string
	Intents    string // one phrasing a line
	K          int
	Result     *codemode.SearchResult
	Error      string
}

// principalFor is the principal the playground searches as: one of the
// configured ones by key, or the operator.
func (c *Console) principalFor(key string) (auth.Principal, bool) {
	if key == "" {
		return auth.Operator(), true
	}
	for _, p := range c.opts.Principals {
		if p.Key() == key {
			return p, true
		}
	}
	return auth.Principal{}, false
}

func (c *Console) search(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	q := r.URL.Query()
	d := searchData{CodeMode: c.opts.Engine != nil, Principal: q.Get("principal"), Intent: q.Get("intent"), Intents: q.Get("intents")}
	for _, pr := range c.opts.Principals {
		d.Principals = append(d.Principals, pr.Key())
	}
	d.K, _ = strconv.Atoi(q.Get("k"))
	if d.CodeMode && (strings.TrimSpace(d.Intent) != "" || strings.TrimSpace(d.Intents) != "") {
		as, ok := c.principalFor(d.Principal)
		if !ok {
			d.Error = "unknown principal " + strconv.Quote(d.Principal) + ": choose one of the list"
		} else {
			var more []string
			for _, line := range strings.Split(d.Intents, "\n") {
				if line = strings.TrimSpace(line); line != "" {
					more = append(more, line)
				}
			}
			var b [8]byte
			_, _ = rand.Read(b[:])
			res, err := c.opts.Engine.Search(r.Context(), codemode.SearchRequest{Intent: d.Intent, Intents: more, K: d.K,
				Caller: auth.Caller{Principal: as, Session: auth.SessionID("console-search-" + hex.EncodeToString(b[:]))}})
			if err != nil {
				d.Error = err.Error()
			}
			d.Result = res
		}
	}
	c.render(w, r, "search", page{Title: "Search playground", Nav: "search", Data: d}, &p)
}
