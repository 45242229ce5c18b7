package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/yosida95/uritemplate/v3"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/gateway/internal/upstream"
)

// Pass-through of resources, prompts and completions: the MCP front end
// forwards these to the server that listed the resource or prompt. Results
// are returned raw (minus the upstream's _meta).

// resourceOwner finds the server of a resource URI: one that listed it, else
// one whose resource template matches it, else the only server with resources.
func (g *Gateway) resourceOwner(uri string) (*route, error) {
	snap := g.catalog.load()
	for _, name := range g.names {
		if l := snap.servers[name]; l != nil {
			for _, r := range l.resources {
				if r.URI == uri {
					return g.upstreams[name], nil
				}
			}
		}
	}
	for _, name := range g.names {
		if l := snap.servers[name]; l != nil {
			for _, t := range l.templates {
				tpl, err := uritemplate.New(t.URITemplate)
				if err == nil && tpl.Regexp().MatchString(uri) {
					return g.upstreams[name], nil
				}
			}
		}
	}
	var only *route
	for _, name := range g.names {
		if c := g.upstreams[name].sup.Conn(); c != nil && c.Capabilities().Resources != nil {
			if only != nil {
				only = nil
				break
			}
			only = g.upstreams[name]
		}
	}
	if only != nil {
		return only, nil
	}
	return nil, newError(CodeNotFound, "", nil, map[string]any{"uri": uri}, "no server lists the resource %q; list resources (resources/list) to see what exists", truncate(uri, 200))
}

// forward sends one pass-through request to a server for a caller.
func (g *Gateway) forward(ctx context.Context, u *route, caller auth.Caller, method string, params map[string]any) (json.RawMessage, error) {
	c := u.sup.Conn()
	if c == nil {
		return nil, g.unavailable(u, "", nil)
	}
	if err := g.scope(caller, u.name, ""); err != nil {
		return nil, err
	}
	if u.sc.SessionToken {
		tok, err := g.callerToken(ctx, caller, u.name, "")
		if err != nil {
			return nil, err
		}
		ctx = upstream.WithToken(ctx, tok)
	}
	var oauthTok string
	if usesOAuth(u.sc) {
		c := &call{req: CallRequest{Caller: caller}, u: u, toolID: ""}
		if err := g.oauthStep(ctx, c); err != nil {
			return nil, err
		}
		if oauthTok = c.token; oauthTok != "" {
			ctx = upstream.WithToken(ctx, oauthTok)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, g.cfg.timeoutFor(u.sc, ""))
	defer cancel()
	ctx = upstream.WithCaller(ctx, caller)
	defer g.sessions.enter(u.name, callOwner(caller, "p"+strconv.FormatUint(g.callSeq.Add(1), 10)))()
	raw, err := c.Forward(ctx, method, params, g.sessionLogLevel(caller))
	if err != nil && oauthTok != "" && errors.Is(err, transport.ErrAuthorizationRequired) {
		g.oauthRejected(ctx, u, oauthOwner(caller.Principal), oauthTok) // renewed at the next request
	}
	if err != nil {
		return nil, g.forwardError(ctx, u, "", err, g.cfg.timeoutFor(u.sc, ""))
	}
	if int64(len(raw)) > g.cfg.Settings.MaxResultBytes {
		return nil, tooLarge(method, int64(len(raw)), g.cfg.Settings.MaxResultBytes, 0)
	}
	return stripMeta(raw), nil
}

// ReadResource reads a resource from the server that lists it.
func (g *Gateway) ReadResource(ctx context.Context, caller auth.Caller, uri string) (raw json.RawMessage, err error) {
	defer g.auditPassThrough(AuditKindResource, caller, "", []byte(uri), time.Now(), &raw, &err)
	u, err := g.resourceOwner(uri)
	if err != nil {
		return nil, err
	}
	return g.forward(ctx, u, caller, "resources/read", map[string]any{"uri": uri})
}

// GetPrompt renders a prompt, named by its wire name.
func (g *Gateway) GetPrompt(ctx context.Context, caller auth.Caller, name string, args map[string]string) (raw json.RawMessage, err error) {
	defer g.auditPassThrough(AuditKindPrompt, caller, name, promptArguments(args), time.Now(), &raw, &err)
	p, ok := g.catalog.load().prompts[name]
	if !ok {
		return nil, newError(CodeNotFound, "", nil, map[string]any{"prompt": name}, "there is no prompt %q; list prompts (prompts/list) to see what exists", truncate(name, 100))
	}
	params := map[string]any{"name": p.Name}
	if len(args) > 0 {
		params["arguments"] = args
	}
	return g.forward(ctx, g.upstreams[p.Server], caller, "prompts/get", params)
}

// Complete forwards completion/complete for a prompt argument (ref/prompt,
// by wire name) or a resource template argument (ref/resource). A server
// that does not offer completions yields an empty list.
func (g *Gateway) Complete(ctx context.Context, caller auth.Caller, params json.RawMessage) (raw json.RawMessage, err error) {
	defer g.auditPassThrough(AuditKindCompletion, caller, completionPrompt(params), params, time.Now(), &raw, &err)
	var p map[string]any
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, newError(CodeNotFound, "", err, nil, "completion/complete params are not a JSON object")
	}
	delete(p, "_meta")
	ref, _ := p["ref"].(map[string]any)
	var u *route
	switch ref["type"] {
	case "ref/prompt":
		name, _ := ref["name"].(string)
		pr, ok := g.catalog.load().prompts[name]
		if !ok {
			return nil, newError(CodeNotFound, "", nil, map[string]any{"prompt": name}, "there is no prompt %q", truncate(name, 100))
		}
		u = g.upstreams[pr.Server]
		ref["name"] = pr.Name
	case "ref/resource":
		uri, _ := ref["uri"].(string)
		var err error
		if u, err = g.resourceOwner(uri); err != nil {
			return nil, err
		}
	default:
		return nil, newError(CodeNotFound, "", nil, nil, "completion ref type %v is not ref/prompt or ref/resource", ref["type"])
	}
	if c := u.sup.Conn(); c != nil && c.Capabilities().Completions == nil {
		return json.RawMessage(`{"completion":{"values":[]}}`), nil
	}
	return g.forward(ctx, u, caller, "completion/complete", p)
}
