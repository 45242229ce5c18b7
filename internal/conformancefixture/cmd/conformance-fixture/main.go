// Command conformance-fixture serves the conformance fixture server
// (internal/conformancefixture) over stdio, the way a gateway runs an
// upstream, or over streamable HTTP for running the conformance suite
// directly:
//
//	conformance-fixture                          # stdio
//	conformance-fixture -http 127.0.0.1:3001     # http://127.0.0.1:3001/mcp
//	npx conformance server --url http://127.0.0.1:3001/mcp
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/sandboxrt/sandbox/internal/conformancefixture"
)

func main() {
	addr := flag.String("http", "", "serve streamable HTTP at `host:port` (path /mcp) instead of stdio; port 0 picks a free one")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: conformance-fixture [-http host:port]\n\nServes the MCP conformance suite's server fixtures, over stdio by default.\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	var err error
	if *addr == "" {
		err = server.NewStdioServer(conformancefixture.New()).Listen(ctx, os.Stdin, os.Stdout)
	} else {
		err = serveHTTP(ctx, *addr)
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		log.Fatalf("conformance-fixture: %v", err)
	}
}

func serveHTTP(ctx context.Context, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w (pick another address with -http)", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", conformancefixture.NewHTTPHandler(conformancefixture.New()))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	// The URL line is the contract with scripts and tests that start us with
	// port 0: they read it from stderr.
	fmt.Fprintf(os.Stderr, "conformance-fixture: serving http://%s/mcp\n", ln.Addr())
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
