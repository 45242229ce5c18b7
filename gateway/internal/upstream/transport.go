package upstream

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

	"github.com/sandboxrt/sandbox/internal/logx"
	"github.com/sandboxrt/sandbox/internal/telemetry"
)

// ClientCapabilities are advertised upstream at the handshake and with the
// gateway's own requests: the union of what downstream clients can do, so
// that tools which depend on sampling, elicitation or roots are listed. A
// 2026-07-28 request made for a caller declares only what that caller can
// have answered (WithCaller's Answers); a 2025-era server, which learnt
// these once, is answered with an error at call time for what the calling
// session's client cannot do.
func ClientCapabilities() mcp.ClientCapabilities { return capabilitiesAnswering(AnswersAll) }

// capabilitiesAnswering is the client capabilities a request declares when
// its caller can have a's questions answered: roots always (the gateway answers them
// from its config), sampling and elicitation only as a says.
func capabilitiesAnswering(a Answers) mcp.ClientCapabilities {
	var caps mcp.ClientCapabilities
	if a&AnswersSampling != 0 {
		caps.Sampling = &mcp.SamplingCapability{}
	}
	if a&AnswersElicitation != 0 {
		caps.Elicitation = &mcp.ElicitationCapability{Form: &struct{}{}, URL: &struct{}{}}
	}
	caps.Roots = &struct {
		ListChanged bool `json:"listChanged,omitempty"`
	}{ListChanged: true}
	return caps
}

// connect starts the transport, negotiates the protocol and lists everything.
func (s *Supervisor) connect(ctx context.Context) (*Conn, error) {
	opts := s.opts
	c := newConn(s, ctx)
	// Connection-level requests carry the operator's token, and so do the
	// streams that live as long as the connection (an SSE server's GET
	// stream, a listen stream), which start from ctx itself.
	ctx = s.withOperatorToken(ctx)
	initCtx, cancel := context.WithTimeout(ctx, opts.StartupTimeout)
	defer cancel()

	pinned := s.spec.ProtocolVersion
	legacyListen := pinned != "" && !mcp.IsModernProtocol(pinned)
	tr, err := s.newTransport(c, legacyListen)
	if err != nil {
		return nil, err
	}
	if err := c.start(ctx, initCtx, tr, pinned); err != nil {
		c.close()
		return nil, s.connectRefused(initCtx, err)
	}
	// A streamable-HTTP server that turned out not to speak the stateless
	// protocol sends its notifications (list_changed, resources/updated) on
	// the GET stream, which only a transport set up for it listens to:
	// reconnect with one, pinned to the version just negotiated.
	if s.spec.Transport == StreamableHTTP && !c.modern && !legacyListen {
		version := c.version
		c.close()
		c = newConn(s, c.life)
		if tr, err = s.newTransport(c, true); err != nil {
			return nil, err
		}
		if err := c.start(ctx, initCtx, tr, version); err != nil {
			c.close()
			return nil, err
		}
	}
	if err := s.refresh(initCtx, c, refreshAll); err != nil {
		c.close()
		return nil, fmt.Errorf("listing after connecting: %w", err)
	}
	if c.modern {
		c.startListen(ctx)
	}
	s.resubscribe(initCtx, c)
	c.SetLogLevel(initCtx, s.host.LogLevel())
	return c, nil
}

// connectRefused lets the host explain a connection the server refused
// with 401 (the operator's login or token is missing or wrong).
func (s *Supervisor) connectRefused(ctx context.Context, err error) error {
	if !errors.Is(err, transport.ErrAuthorizationRequired) {
		return err
	}
	return s.host.ConnectRefused(ctx, err)
}

// newTransport builds the mcp-go transport for the server's spec.
func (s *Supervisor) newTransport(c *Conn, legacyListen bool) (transport.Interface, error) {
	max := s.opts.MaxResultBytes
	httpClient := &http.Client{Transport: &cappedTransport{base: http.DefaultTransport, max: max, activity: &c.activity}}
	headerFunc := func(ctx context.Context) map[string]string {
		var h map[string]string
		if tok := TokenFrom(ctx); tok != "" {
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
	switch s.spec.Transport {
	case Stdio:
		p, err := startProcess(s.spec, max, c.desk, &c.activity)
		if err != nil {
			return nil, err
		}
		c.proc = p
		s.stderr.Store(p.stderr)
		go func() {
			<-p.exited
			c.markDead("the server process "+p.exitStatus(), p.stderrExcerpt())
		}()
		return newStdioTransport(p.stdout, p.stdin, logx.DebugOnly(s.log)), nil
	case StreamableHTTP:
		topts := []transport.StreamableHTTPCOption{
			transport.WithHTTPBasicClient(httpClient),
			transport.WithHTTPHeaders(s.spec.Headers),
			transport.WithHTTPHeaderFunc(headerFunc),
			transport.WithHTTPLogger(logx.DebugOnly(s.log)),
		}
		if legacyListen {
			//lint:ignore SA1019 the 2025-era protocol (its logging, GET stream and subscriptions) is served and tested on purpose
			topts = append(topts, transport.WithContinuousListening())
		}
		c.isHTTP = true
		return transport.NewStreamableHTTP(s.spec.URL, topts...)
	case SSE:
		c.isHTTP = true
		return transport.NewSSE(s.spec.URL,
			transport.WithHTTPClient(httpClient),
			transport.WithHeaders(s.spec.Headers),
			transport.WithHeaderFunc(headerFunc),
			transport.WithSSELogger(logx.DebugOnly(s.log)),
			transport.WithResponseTimeout(24*time.Hour), // the router's deadlines apply
		)
	case InProcess:
		return transport.NewInProcessTransportWithOptions(s.spec.InProcess,
			transport.WithSamplingHandler(inprocSampling{c}),
			transport.WithElicitationHandler(inprocElicitation{c}),
			transport.WithRootsHandler(inprocRoots{c}),
		), nil
	}
	return nil, fmt.Errorf("unknown transport %q", s.spec.Transport)
}

// withOperatorToken gives a connection-level request (initialize, listing,
// health checks, subscriptions) the operator's token, when the server takes
// one: those requests serve every caller, so no caller's token is used.
func (s *Supervisor) withOperatorToken(ctx context.Context) context.Context {
	if tok := s.host.OperatorToken(ctx); tok != "" {
		return WithToken(ctx, tok)
	}
	return ctx
}
