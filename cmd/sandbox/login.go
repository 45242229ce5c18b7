package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"time"

	"github.com/spf13/cobra"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/gateway"
)

func newLoginCmd() *cobra.Command {
	var f gatewayFlags
	var principal string
	var noBrowser bool
	var wait time.Duration
	cmd := &cobra.Command{
		Use:   "login SERVER",
		Short: "Log in to an MCP server that asks for OAuth, and keep its tokens for the gateway",
		Long: `Log in to an HTTP MCP server protected by OAuth 2.1 (the MCP authorization
spec): sandbox finds the server's authorization server, registers a client
with it when the config names none, prints the URL to approve in a browser (and
opens one when it can), receives the answer on a loopback port, and keeps the
tokens in a file only you can read (the config's "gateway.oauthTokens", else
~/.config/sandbox/oauth-tokens.json). From then on "sandbox run", "search" and
"serve" call the server with them, renewing them as they expire.

With --principal, the login is for a principal of "sandbox serve" (its API
key's name, or tenant/subject of its OAuth token): that principal's calls
carry it; nobody else's do.`,
		Example: `  sandbox login github --config mcp.json
  sandbox login linear --config mcp.json --principal acme/alice --no-browser`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			g, a, err := f.offlineGateway()
			if err != nil {
				return err
			}
			defer g.Close()
			stderr := cmd.ErrOrStderr()
			owner := ownerFlag(a, principal)
			grant, err := g.Login(cmd.Context(), args[0], gateway.LoginOptions{
				Owner: owner,
				Wait:  wait,
				Show: func(u string) {
					fmt.Fprintf(stderr, "sandbox: to log in to %s, open this URL in a browser:\n\n  %s\n\n", args[0], u)
					if !noBrowser {
						openBrowser(u)
					}
					fmt.Fprintln(stderr, "sandbox: waiting for the browser...")
				},
			})
			if errors.Is(err, gateway.ErrNoLoginNeeded) {
				fmt.Fprintf(stderr, "sandbox: %s answered without a login: it needs none\n", args[0])
				return nil
			}
			if err != nil {
				return &exitError{code: 1, msg: "login failed: " + err.Error()}
			}
			validity := "no expiry given"
			if !grant.Token.ExpiresAt.IsZero() {
				validity = "valid for " + time.Until(grant.Token.ExpiresAt).Round(time.Second).String()
			}
			renew := "no refresh token: log in again when it expires"
			if grant.Token.RefreshToken != "" {
				renew = "renewed automatically"
			}
			fmt.Fprintf(stderr, "sandbox: logged in to %s as %s (token %s, %s)\n", args[0], owner, validity, renew)
			return nil
		},
	}
	f.add(cmd, "warn")
	cmd.Flags().StringVar(&principal, "principal", "", "log in for this principal of sandbox serve (an API key's name, or tenant/subject) instead of the operator")
	cmd.Flags().BoolVar(&noBrowser, "no-browser", false, "only print the URL; do not try to open a browser")
	cmd.Flags().DurationVar(&wait, "wait", 5*time.Minute, "longest wait for the login to be finished in the browser")
	return cmd
}

func newLogoutCmd() *cobra.Command {
	var f gatewayFlags
	var principal string
	cmd := &cobra.Command{
		Use:   "logout SERVER",
		Short: "Forget the OAuth login to an MCP server",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			g, a, err := f.offlineGateway()
			if err != nil {
				return err
			}
			defer g.Close()
			owner := ownerFlag(a, principal)
			ok, err := g.Logout(cmd.Context(), args[0], owner)
			if err != nil {
				return &exitError{code: 1, msg: err.Error()}
			}
			if !ok {
				fmt.Fprintf(cmd.ErrOrStderr(), "sandbox: %s was not logged in to %s\n", owner, args[0])
				return nil
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "sandbox: logged %s out of %s\n", owner, args[0])
			return nil
		},
	}
	f.add(cmd, "warn")
	cmd.Flags().StringVar(&principal, "principal", "", "the principal of sandbox serve to log out (default: the operator)")
	return cmd
}

// ownerFlag is the OAuth grant owner a --principal flag names: an API
// key's name stands for its principal (tenant/name); anything else is
// taken as a principal key (tenant/subject of an OAuth token).
func ownerFlag(a auth.Config, principal string) string {
	if principal == "" {
		return auth.Operator().Key()
	}
	for _, k := range a.APIKeys {
		if k.Name == principal {
			return k.Principal().Key()
		}
	}
	return principal
}

// offlineGateway is the config's gateway, not started (enough to log in and
// out), and the config's authentication. With "gateway.redis" the logins
// are kept there, for every replica.
func (f *gatewayFlags) offlineGateway() (*gateway.Gateway, auth.Config, error) {
	file, err := f.load()
	if err != nil {
		return nil, auth.Config{}, err
	}
	log, err := f.logger(os.Stderr)
	if err != nil {
		return nil, auth.Config{}, err
	}
	opts := []gateway.Option{gateway.WithLogger(log)}
	shared, err := openShared(file)
	if err != nil {
		return nil, auth.Config{}, err
	}
	if shared != nil {
		opts = append(opts, gateway.WithOAuthStore(shared.oauth))
	}
	g, err := gateway.New(file.Gateway, opts...)
	return g, file.Auth, err
}

// openBrowser opens u in the desktop's browser, when there is a desktop.
func openBrowser(u string) {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", u)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", u)
	default:
		if os.Getenv("DISPLAY") == "" && os.Getenv("WAYLAND_DISPLAY") == "" {
			return
		}
		cmd = exec.Command("xdg-open", u)
	}
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if cmd.Start() == nil {
		go func() { _ = cmd.Wait() }()
	}
}
