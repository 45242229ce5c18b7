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
//
// A server outside the caller's scope does not exist for it here either: a
// resource URI or prompt that only such servers offer is NOT_FOUND with the
// words of one nobody offers, and a URI several servers list resolves among
// the caller's own.

// ResourceServer is the server a caller's resources/read of uri goes to:
// among the servers its principal may use, one its session sees before one
// it disconnected from, one that listed the URI before one whose resource
// template matches it or is it (servers by name within each). ok is false
// when no such server offers the URI: for this caller it does not exist.
func (g *Gateway) ResourceServer(caller auth.Caller, uri string) (server string, ok bool) {
	if u := g.offering(caller, uri); u != nil {
		return u.name, true
	}
	return "", false
}

// offering is ResourceServer's route.
func (g *Gateway) offering(caller auth.Caller, uri string) *route {
	snap := g.catalog.load()
	lists := func(name string) bool {
		for _, r := range snap.servers[name].resources {
			if r.URI == uri {
				return true
			}
		}
		return false
	}
	matches := func(name string) bool {
		for _, t := range snap.servers[name].templates {
			if t.URITemplate == uri { // a completion's ref/resource names the template itself
				return true
			}
			tpl, err := uritemplate.New(t.URITemplate)
			if err == nil && tpl.Regexp().MatchString(uri) {
				return true
			}
		}
		return false
	}
	for _, may := range []func(string) bool{
		func(name string) bool { return g.Sees(caller, name) },
		caller.Principal.MaySee, // a server the session disconnected from: the pipeline says how to connect it
	} {
		for _, offers := range []func(string) bool{lists, matches} {
			for _, name := range g.names {
				if snap.servers[name] != nil && may(name) && offers(name) {
					return g.upstreams[name]
				}
			}
		}
	}
	return nil
}

// resourceOwner finds the server of a resource URI for a caller: the
// ResourceServer, else the only server with resources among those its
// principal may use.
func (g *Gateway) resourceOwner(caller auth.Caller, uri string) (*route, error) {
	if u := g.offering(caller, uri); u != nil {
		return u, nil
	}
	var only *route
	for _, name := range g.names {
		if !caller.Principal.MaySee(name) {
			continue
		}
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

// prompt finds a prompt by its wire name among the servers caller's
// principal may use.
func (g *Gateway) prompt(caller auth.Caller, name string) (*Prompt, *Error) {
	p, ok := g.catalog.load().prompts[name]
	if !ok || !caller.Principal.MaySee(p.Server) {
		return nil, newError(CodeNotFound, "", nil, map[string]any{"prompt": name}, "there is no prompt %q; list prompts (prompts/list) to see what exists", truncate(name, 100))
	}
	return p, nil
}

// forward sends one pass-through request to a server for a caller.
func (g *Gateway) forward(ctx context.Context, u *route, caller auth.Caller, method string, params map[string]any) (json.RawMessage, error) {
	if err := g.scope(caller, u.name, ""); err != nil { // before its state: a server out of scope has none
		return nil, err
	}
	c := u.sup.Conn()
	if c == nil {
		return nil, g.unavailable(u, "", nil)
	}
	if u.sc.SessionToken {
		tok, err := g.callerToken(ctx, caller, u.name, "")
		if err != nil {
			return nil, err
		}
		ctx = upstream.WithToken(ctx, tok)
		defer g.sentTokens.hold(u.name, tok)()
	}
	var oauthTok string
	if usesOAuth(u.sc) {
		c := &call{req: CallRequest{Caller: caller}, u: u, toolID: ""}
		if err := g.oauthStep(ctx, c); err != nil {
			return nil, err
		}
		if oauthTok = c.token; oauthTok != "" {
			ctx = upstream.WithToken(ctx, oauthTok)
			defer g.sentTokens.hold(u.name, oauthTok)()
		}
	}
	ctx, cancel := context.WithTimeout(ctx, g.cfg.timeoutFor(u.sc, ""))
	defer cancel()
	ctx = askingContext(upstream.WithCaller(ctx, caller, g.answering(ctx, caller)))
	defer g.sessions.enter(ctx, u.name, callOwner(caller, "p"+strconv.FormatUint(g.callSeq.Add(1), 10)))()
	raw, err := c.Forward(ctx, method, params, g.sessionLogLevel(caller))
	if err != nil && oauthTok != "" && errors.Is(err, transport.ErrAuthorizationRequired) {
		g.oauthRejected(ctx, u, oauthOwner(caller.Principal), oauthTok) // renewed at the next request
	}
	secrets := g.serverSecrets(u.name) // the answer's words are the server's (redact.go)
	if err != nil {
		secrets.rpcError(err)
		return nil, secrets.error(g.forwardError(ctx, u, "", err, g.cfg.timeoutFor(u.sc, "")))
	}
	if int64(len(raw)) > g.cfg.Settings.MaxResultBytes {
		return nil, tooLarge(method, int64(len(raw)), g.cfg.Settings.MaxResultBytes, 0)
	}
	return secrets.json(stripMeta(raw)), nil
}

// ReadResource reads a resource from the server that lists it.
func (g *Gateway) ReadResource(ctx context.Context, caller auth.Caller, uri string) (raw json.RawMessage, err error) {
	defer g.auditPassThrough(AuditKindResource, caller, "", []byte(uri), time.Now(), &raw, &err)
	u, err := g.resourceOwner(caller, uri)
	if err != nil {
		return nil, err
	}
	return g.forward(ctx, u, caller, "resources/read", map[string]any{"uri": uri})
}

// GetPrompt renders a prompt, named by its wire name.
func (g *Gateway) GetPrompt(ctx context.Context, caller auth.Caller, name string, args map[string]string) (raw json.RawMessage, err error) {
	defer g.auditPassThrough(AuditKindPrompt, caller, name, promptArguments(args), time.Now(), &raw, &err)
	p, perr := g.prompt(caller, name)
	if perr != nil {
		return nil, perr
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
		pr, perr := g.prompt(caller, name)
		if perr != nil {
			return nil, perr
		}
		u = g.upstreams[pr.Server]
		ref["name"] = pr.Name
	case "ref/resource":
		uri, _ := ref["uri"].(string)
		var err error
		if u, err = g.resourceOwner(caller, uri); err != nil {
			return nil, err
		}
	default:
		return nil, newError(CodeNotFound, "", nil, nil, "completion ref type %v is not ref/prompt or ref/resource", ref["type"])
	}
	if err := g.scope(caller, u.name, ""); err != nil {
		return nil, err
	}
	if c := u.sup.Conn(); c != nil && c.Capabilities().Completions == nil {
		return json.RawMessage(`{"completion":{"values":[]}}`), nil
	}
	return g.forward(ctx, u, caller, "completion/complete", p)
}
