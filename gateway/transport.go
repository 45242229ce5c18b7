package gateway

// Connecting to an upstream: the transport for its kind (stdio, streamable
// HTTP, SSE, in-process), the capabilities advertised to it, and the
// operator's token on connection-level requests.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"go.opentelemetry.io/otel/trace"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/internal/logx"
	"github.com/sandboxrt/sandbox/internal/telemetry"
)

// clientCapabilities are advertised upstream: the union of what downstream
// clients can do, so that tools which depend on sampling, elicitation or
// roots are listed. A request for something the calling session's client
// cannot do is answered with an error at call time.
func clientCapabilities() mcp.ClientCapabilities {
	caps := mcp.ClientCapabilities{
		Sampling:    &mcp.SamplingCapability{},
		Elicitation: &mcp.ElicitationCapability{Form: &struct{}{}, URL: &struct{}{}},
	}
	caps.Roots = &struct {
		ListChanged bool `json:"listChanged,omitempty"`
	}{ListChanged: true}
	return caps
}

// connect starts the transport, negotiates the protocol and lists everything.
func (u *upstream) connect(ctx context.Context) (*connection, error) {
	opts := u.g.cfg.Settings
	c := newConnection(u)
	// Connection-level requests carry the operator's token, and so do the
	// streams that live as long as the connection (an SSE server's GET
	// stream, a listen stream), which start from ctx itself.
	ctx = u.withOperatorToken(ctx)
	initCtx, cancel := context.WithTimeout(ctx, opts.StartupTimeout)
	defer cancel()

	pinned := u.sc.ProtocolVersion
	legacyListen := pinned != "" && !mcp.IsModernProtocol(pinned)
	tr, err := u.newTransport(c, legacyListen)
	if err != nil {
		return nil, err
	}
	if err := c.start(ctx, initCtx, tr, pinned); err != nil {
		c.close()
		return nil, u.connectRefused(initCtx, err)
	}
	// A streamable-HTTP server that turned out not to speak the stateless
	// protocol sends its notifications (list_changed, resources/updated) on
	// the GET stream, which only a transport set up for it listens to:
	// reconnect with one, pinned to the version just negotiated.
	if u.sc.Transport == TransportStreamableHTTP && !c.modern && !legacyListen {
		version := c.version
		c.close()
		c = newConnection(u)
		if tr, err = u.newTransport(c, true); err != nil {
			return nil, err
		}
		if err := c.start(ctx, initCtx, tr, version); err != nil {
			c.close()
			return nil, err
		}
	}
	if err := u.refresh(initCtx, c, refreshAll); err != nil {
		c.close()
		return nil, fmt.Errorf("listing after connecting: %w", err)
	}
	if c.modern {
		c.startListen(ctx)
	}
	u.resubscribe(initCtx, c)
	u.g.applyLogLevel(initCtx, c)
	return c, nil
}

// connectRefused explains a connection the server refused with 401: the
// operator's OAuth login is missing or was refused (then it is renewed at
// the next attempt), or the configured credentials are wrong.
func (u *upstream) connectRefused(ctx context.Context, err error) error {
	if !errors.Is(err, transport.ErrAuthorizationRequired) {
		return err
	}
	if usesOAuth(u.sc) {
		tok, _ := ctx.Value(tokenKey{}).(string)
		u.g.oauthRejected(ctx, u, auth.Operator().Key(), tok)
		return fmt.Errorf("the server asks for an OAuth login: run `sandbox login %s --config <your mcp.json>` (%w)", u.name, err)
	}
	if u.sc.SessionToken {
		return fmt.Errorf("the server refused the operator's token: pass a valid one with --token-env %s=VAR (%w)", u.name, err)
	}
	return fmt.Errorf("the server refused the connection's credentials: check its \"headers\" in the config (%w)", err)
}

// newTransport builds the mcp-go transport for the server's configuration.
func (u *upstream) newTransport(c *connection, legacyListen bool) (transport.Interface, error) {
	max := u.g.cfg.Settings.MaxResultBytes
	httpClient := &http.Client{Transport: &cappedTransport{base: http.DefaultTransport, max: max, activity: &c.activity}}
	headerFunc := func(ctx context.Context) map[string]string {
		var h map[string]string
		if tok, ok := ctx.Value(tokenKey{}).(string); ok && tok != "" {
			h = map[string]string{"Authorization": "Bearer " + tok}
		}
		if trace.SpanContextFromContext(ctx).IsValid() {
			if h == nil {
				h = map[string]string{}
			}
			telemetry.Inject(ctx, h) // W3C traceparent of the request's span
		}
		return h
	}
	switch u.sc.Transport {
	case TransportStdio:
		p, err := startProcess(u.sc, max, &c.activity)
		if err != nil {
			return nil, err
		}
		c.proc = p
		go func() {
			<-p.exited
			c.markDead("the server process "+p.exitStatus(), p.stderrTail())
		}()
		return transport.NewIO(p.stdout, p.stdin, nil), nil
	case TransportStreamableHTTP:
		topts := []transport.StreamableHTTPCOption{
			transport.WithHTTPBasicClient(httpClient),
			transport.WithHTTPHeaders(u.sc.Headers),
			transport.WithHTTPHeaderFunc(headerFunc),
			transport.WithHTTPLogger(logx.DebugOnly(u.g.log)),
		}
		if legacyListen {
			//lint:ignore SA1019 the 2025-era protocol (its logging, GET stream and subscriptions) is served and tested on purpose
			topts = append(topts, transport.WithContinuousListening())
		}
		c.isHTTP = true
		return transport.NewStreamableHTTP(u.sc.URL, topts...)
	case TransportSSE:
		c.isHTTP = true
		return transport.NewSSE(u.sc.URL,
			transport.WithHTTPClient(httpClient),
			transport.WithHeaders(u.sc.Headers),
			transport.WithHeaderFunc(headerFunc),
			transport.WithSSELogger(logx.DebugOnly(u.g.log)),
			transport.WithResponseTimeout(24*time.Hour), // the router's deadlines apply
		)
	case transportInProcess:
		return transport.NewInProcessTransportWithOptions(u.inproc,
			transport.WithSamplingHandler(inprocSampling{c}),
			transport.WithElicitationHandler(inprocElicitation{c}),
			transport.WithRootsHandler(inprocRoots{c}),
		), nil
	}
	return nil, fmt.Errorf("unknown transport %q", u.sc.Transport)
}

// tokenKey carries the bearer token of the request being sent to the
// transport's header function.
type tokenKey struct{}

// withOperatorToken gives a connection-level request (initialize, listing,
// health checks, subscriptions) the operator's token for a "sessionToken"
// server: those requests serve every caller, so no caller's token is used.
func (u *upstream) withOperatorToken(ctx context.Context) context.Context {
	if usesOAuth(u.sc) {
		tok, err := u.g.oauthToken(ctx, u, auth.Operator().Key())
		if err != nil {
			u.g.log.Warn("the operator's OAuth login cannot be used", "server", u.name, "error", err)
		}
		if tok != "" {
			return context.WithValue(ctx, tokenKey{}, tok)
		}
		return ctx
	}
	if !u.sc.SessionToken {
		return ctx
	}
	tok, ok, err := u.g.tokens.Token(ctx, operatorTokens(), u.name)
	if err != nil {
		u.g.log.Warn("reading the operator's token failed", "server", u.name, "error", err)
	}
	if ok {
		return context.WithValue(ctx, tokenKey{}, tok)
	}
	return ctx
}
