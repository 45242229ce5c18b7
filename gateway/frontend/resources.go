package frontend

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/gateway"
)

// Resources. A caller sees the resources and templates of the servers it
// may see, and a resource only other servers offer does not exist for it:
// reading one must get exactly the answer a URI nobody offers gets, which
// mcp-go makes itself (a JSON-RPC error whose code depends on the protocol
// era), and nothing a handler returns can reproduce (mcp-go answers every
// handler error as an internal error). mcp-go's registry is global, so it
// holds no upstream resource at all:
//
//   - one resource is registered, under a URI no upstream has
//     (routedURI), whose handler is readResource;
//   - before mcp-go looks a read up, routeRead asks the gateway whether the
//     caller may read the URI (gateway.Gateway.ResourceServer): if it may,
//     the read is handed to that one resource, with the URI beside it; if
//     not, mcp-go looks the URI up, finds nothing and answers as for any
//     unknown URI;
//   - resources/list and resources/templates/list are the caller's view
//     of the catalog (callerResources, callerTemplates), put in mcp-go's
//     answers by its after-hooks, sorted by name as mcp-go sorts.
//
// mcp-go's pagination is not configured: each list is one page.

// routedURI is the URI mcp-go's registry holds: a read the caller may make
// is handed to it, its URI in routedArgument. A NUL is in no URI an
// upstream lists (catalog entries are URIs) and a client that sends this
// one is answered as for any unknown URI.
const (
	routedURI      = "\x00sandbox:routed"
	routedArgument = "\x00uri"
)

// listedResource is one upstream resource or template as a caller may
// list it, parsed once per catalog change.
type listedResource struct {
	server   string
	resource mcp.Resource
}

type listedTemplate struct {
	server   string
	template mcp.ResourceTemplate
}

// syncResources takes the catalog's resources and templates for the
// callers' lists, and tells the clients when they changed.
func (s *Server) syncResources() {
	resources := s.g.Resources()
	templates := s.g.ResourceTemplates()
	var key strings.Builder
	for _, r := range resources {
		key.WriteString(r.Server)
		key.Write(r.Raw)
	}
	key.WriteString("\x00")
	for _, t := range templates {
		key.WriteString(t.Server)
		key.Write(t.Raw)
	}
	s.mu.Lock()
	if s.resReg["\x00all"] == key.String() {
		s.mu.Unlock()
		return
	}
	s.resReg["\x00all"] = key.String()
	s.mu.Unlock()
	listed := make([]listedResource, 0, len(resources))
	for _, r := range resources {
		var mr mcp.Resource
		if err := json.Unmarshal(r.Raw, &mr); err != nil {
			mr = mcp.Resource{URI: r.URI, Name: r.Name}
		}
		mr.Meta = nil
		listed = append(listed, listedResource{server: r.Server, resource: mr})
	}
	listedTemplates := make([]listedTemplate, 0, len(templates))
	for _, t := range templates {
		var raw struct {
			Title       string `json:"title"`
			Description string `json:"description"`
			MIMEType    string `json:"mimeType"`
		}
		_ = json.Unmarshal(t.Raw, &raw)
		opts := []mcp.ResourceTemplateOption{}
		if raw.Description != "" {
			opts = append(opts, mcp.WithTemplateDescription(raw.Description))
		}
		if raw.MIMEType != "" {
			opts = append(opts, mcp.WithTemplateMIMEType(raw.MIMEType))
		}
		mt := mcp.NewResourceTemplate(t.URITemplate, t.Name, opts...)
		mt.Title = raw.Title
		listedTemplates = append(listedTemplates, listedTemplate{server: t.Server, template: mt})
	}
	s.mu.Lock()
	s.resources, s.templates = listed, listedTemplates
	s.mu.Unlock()
	// Registering the one resource again is what sends
	// notifications/resources/list_changed.
	s.mcp.SetResources(server.ServerResource{Resource: mcp.Resource{URI: routedURI, Name: "routed"}, Handler: s.readResource})
}

// routeRead is the before-hook of resources/read (see above): a read the
// caller may make goes to readResource, any other finds nothing.
func (s *Server) routeRead(ctx context.Context, r *mcp.ReadResourceRequest) {
	uri := r.Params.URI
	r.Params.Arguments = nil // mcp-go's own field; MCP has no arguments for a read
	if _, ok := s.g.ResourceServer(callerOf(ctx), uri); ok {
		r.Params.URI = routedURI
		r.Params.Arguments = map[string]any{routedArgument: uri}
		return
	}
	if uri == routedURI {
		r.Params.URI = "" // nothing is registered under it either
	}
}

// readResource reads a resource routeRead handed over, for the caller.
func (s *Server) readResource(ctx context.Context, r mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	uri, ok := r.Params.Arguments[routedArgument].(string)
	if !ok {
		return nil, fmt.Errorf("the resource read was not routed") // routeRead runs before every read
	}
	binding := requestBinding(string(mcp.MethodResourcesRead), uri, nil)
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.Modern {
		// As for an upstream tool (upstreamHandler): a 2025-era
		// upstream's question pauses the request.
		if id, ok := s.pausedRunOf(ctx, binding, r.Params.RequestState); ok {
			return resumeRun(s, ctx, r.Params.MultiRoundTripParams, binding, id, resourceAnswers)
		}
		return startRun(s, ctx, binding, func(ctx context.Context) ([]mcp.ResourceContents, error) {
			return s.readFromUpstream(ctx, r, uri, binding)
		}, resourceAnswers)
	}
	return s.readFromUpstream(ctx, r, uri, binding)
}

// resourceAnswers are a paused resources/read's: input_required written in
// place of mcp-go's answer (answer.go), errors.
var resourceAnswers = answers[[]mcp.ResourceContents]{
	input: func(ctx context.Context, reqs mcp.InputRequests, state string) ([]mcp.ResourceContents, error) {
		result, err := json.Marshal(map[string]any{"resultType": "input_required", "inputRequests": reqs, "requestState": state})
		if err != nil {
			return nil, err
		}
		if answerResult(ctx, result) {
			return nil, errors.New("answered input_required")
		}
		return nil, errors.New("the resource needs input from the client, which this transport cannot carry for resources/read")
	},
	refuse: func(err error) ([]mcp.ResourceContents, error) { return nil, err },
}

// readFromUpstream reads a resource through its upstream.
func (s *Server) readFromUpstream(ctx context.Context, r mcp.ReadResourceRequest, uri, binding string) ([]mcp.ResourceContents, error) {
	callCtx, modern, err := s.askingContext(ctx, binding, r.Params.MultiRoundTripParams)
	if err != nil {
		return nil, err
	}
	caller := callerOf(ctx)
	raw, err := s.g.ReadResource(callCtx, caller, uri)
	if err != nil {
		if e, ok := upstreamRPCError(err); ok && modern {
			return nil, answerError(ctx, e) // the upstream's code and data (data.uri), as it said them
		}
		return nil, err
	}
	if ir := gateway.ParseInputRequired(raw); ir != nil && modern {
		// mcp-go builds a read's result from contents alone: the answer
		// that asks for input is written in its place (answer.go).
		if _, err := inputRequests(ir); err != nil {
			return nil, err
		}
		result, _ := json.Marshal(map[string]any{"resultType": "input_required", "inputRequests": ir.Requests,
			"requestState": s.states.seal(caller.Principal, binding, ir.State)})
		if answerResult(ctx, result) {
			return nil, errors.New("answered input_required")
		}
		return nil, fmt.Errorf("%s needs input from the client, which this transport cannot carry for resources/read", uri)
	}
	var res struct {
		Contents []json.RawMessage `json:"contents"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("the upstream's resources/read result is not valid: %w", err)
	}
	out := make([]mcp.ResourceContents, 0, len(res.Contents))
	for _, c := range res.Contents {
		out = append(out, rawResourceContents{raw: c})
	}
	return out, nil
}

// rawResourceContents passes resource contents on byte for byte.
type rawResourceContents struct {
	mcp.TextResourceContents
	raw json.RawMessage
}

func (c rawResourceContents) MarshalJSON() ([]byte, error) { return c.raw, nil }

// callerResources are the resources a caller lists: those of the servers
// it sees, a URI several servers list once (the first of its servers by
// name), sorted by name.
func (s *Server) callerResources(caller auth.Caller) []mcp.Resource {
	s.mu.Lock()
	listed := s.resources
	s.mu.Unlock()
	seen := map[string]bool{}
	out := []mcp.Resource{}
	for _, r := range listed {
		if seen[r.resource.URI] || !s.g.Sees(caller, r.server) {
			continue
		}
		seen[r.resource.URI] = true
		out = append(out, r.resource)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// callerTemplates are the resource templates a caller lists, as
// callerResources.
func (s *Server) callerTemplates(caller auth.Caller) []mcp.ResourceTemplate {
	s.mu.Lock()
	listed := s.templates
	s.mu.Unlock()
	seen := map[string]bool{}
	out := []mcp.ResourceTemplate{}
	for _, t := range listed {
		if t.template.URITemplate == nil || !s.g.Sees(caller, t.server) {
			continue
		}
		raw := t.template.URITemplate.Raw()
		if seen[raw] {
			continue
		}
		seen[raw] = true
		out = append(out, t.template)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
