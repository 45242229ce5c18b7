package upstream

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os/exec"
	"strings"
	"syscall"

	"github.com/mark3labs/mcp-go/client/transport"
)

// exitedError is a stdio server that exited before it answered initialize.
// Its text, for the operator, has the exit status and the end of what the
// server printed; startFailure reads the status from the process.
type exitedError struct{ p *process }

func (e *exitedError) Error() string {
	msg := "the server process " + e.p.exitStatus()
	if excerpt := e.p.stderrExcerpt(); excerpt != "" {
		msg += "; " + excerpt
	}
	return msg
}

// ReasonNeedsAuthentication is the Reason of a server that answered 401:
// the gateway then reports the operator's login state for it.
const ReasonNeedsAuthentication = "it needs authentication (HTTP 401)"

// startFailure says why a connection attempt failed, for anyone to read
// (Status.Reason, and through it agents): the class of cause, never a
// command line, a path, an address or what the server printed, which stay
// in the operator's detail (LastError, the log).
func startFailure(err error) string {
	var exited *exitedError
	var lost *ConnLostError
	var dns *net.DNSError
	switch {
	case errors.Is(err, exec.ErrNotFound), errors.Is(err, fs.ErrNotExist):
		return "its command was not found"
	case errors.Is(err, fs.ErrPermission):
		return "its command could not be run (permission denied)"
	case errors.As(err, &exited):
		return exitedReason(exited.p)
	case errors.Is(err, transport.ErrAuthorizationRequired):
		return ReasonNeedsAuthentication
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.As(err, &dns):
		return "its host name could not be resolved"
	case errors.Is(err, context.DeadlineExceeded):
		return "it did not answer in time"
	case errors.As(err, &lost):
		return lost.Reason // the connection's own reason, already fit for agents
	}
	return "could not connect"
}

// exitedReason is how a process that ended before it answered ended.
func exitedReason(p *process) string {
	var ee *exec.ExitError
	if !errors.As(p.err, &ee) {
		return "it exited before it answered"
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return fmt.Sprintf("it was killed by signal %d (%s) before it answered", int(ws.Signal()), ws.Signal())
	}
	return fmt.Sprintf("it exited with status %d before it answered", ee.ExitCode())
}

// withoutRepeats drops a part of an error's text that repeats the part
// before it: mcp-go wraps a failed HTTP request twice, so its text reads
// "failed to send request: failed to send request: Post ...".
func withoutRepeats(msg string) string {
	parts := strings.Split(msg, ": ")
	out := parts[:1]
	for _, p := range parts[1:] {
		if p != out[len(out)-1] {
			out = append(out, p)
		}
	}
	return strings.Join(out, ": ")
}
