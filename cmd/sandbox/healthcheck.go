package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// defaultHTTPAddr is where the Dockerfile's serve listens, and so where
// healthcheck looks when told nothing.
const defaultHTTPAddr = "127.0.0.1:8808"

func newHealthcheckCmd() *cobra.Command {
	var (
		addr    string
		ready   bool
		timeout time.Duration
	)
	cmd := &cobra.Command{
		Use:   "healthcheck",
		Short: "Ask a running `sandbox serve --http` whether it is alive (exit status 0) or not (1)",
		Long: `healthcheck asks a running "sandbox serve --http ADDR" for /healthz (or /readyz
with --ready) and exits 0 when it answers 200, 1 otherwise, saying why on stderr.
It is the container image's HEALTHCHECK: a distroless image has no curl.

Give it the address serve listens on, as given to serve: an unspecified host
(0.0.0.0, [::] or none) is asked on loopback. /healthz and /readyz need no
credentials.`,
		Example: `  sandbox healthcheck                          # serve on 127.0.0.1:8808
  sandbox healthcheck --http 0.0.0.0:8808      # the same port, as given to serve
  sandbox healthcheck --http 127.0.0.1:9000 --ready`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			u, err := healthURL(addr, ready)
			if err != nil {
				return &exitError{code: 2, msg: "--http " + addr + ": " + err.Error()}
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			body, err := probe(ctx, u)
			if err != nil {
				return &exitError{code: 1, msg: "healthcheck: " + err.Error()}
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "%s: %s\n", u, body)
			return err
		},
	}
	cmd.Flags().StringVar(&addr, "http", defaultHTTPAddr, "the address sandbox serve listens on (its --http)")
	cmd.Flags().BoolVar(&ready, "ready", false, "ask /readyz (servers connected, workers warm, Redis answering) instead of /healthz (the process answers)")
	cmd.Flags().DurationVar(&timeout, "timeout", 5*time.Second, "how long to wait for the answer")
	return cmd
}

// healthURL is the probe's URL for serve's --http address: a wildcard
// host, which serve listens on but nobody can send to, becomes loopback.
func healthURL(addr string, ready bool) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("give host:port, as to sandbox serve --http (e.g. %s)", defaultHTTPAddr)
	}
	if port == "" || port == "0" {
		return "", fmt.Errorf("give the port serve listens on (port 0 is picked at serve's start; serve logs it)")
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
		if ip != nil && ip.To4() == nil {
			host = "::1"
		}
	}
	path := "/healthz"
	if ready {
		path = "/readyz"
	}
	return "http://" + net.JoinHostPort(host, port) + path, nil
}

// probe GETs u and returns the answer's first line when it is 200.
func probe(ctx context.Context, u string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("no answer from %s: %w (is sandbox serve --http running on that address?)", u, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	line, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s answered %s: %s", u, resp.Status, line)
	}
	return line, nil
}
