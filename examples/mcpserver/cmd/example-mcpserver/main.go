// Command example-mcpserver serves the example project tracker
// (examples/mcpserver) over stdio, as MCP clients and the sandbox gateway
// start it, or over streamable HTTP with -http:
//
//	go run ./examples/mcpserver/cmd/example-mcpserver
//	go run ./examples/mcpserver/cmd/example-mcpserver -http 127.0.0.1:3002   # http://127.0.0.1:3002/mcp
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

	"github.com/sandboxrt/sandbox/examples/mcpserver"
)

func main() {
	addr := flag.String("http", "", "serve streamable HTTP at `host:port` (path /mcp) instead of stdio; port 0 picks a free one")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: example-mcpserver [-http host:port]\n\nServes the example project tracker MCP server, over stdio by default.\n\n")
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
		err = server.NewStdioServer(mcpserver.New()).Listen(ctx, os.Stdin, os.Stdout)
	} else {
		err = serveHTTP(ctx, *addr)
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		log.Fatalf("example-mcpserver: %v", err)
	}
}

func serveHTTP(ctx context.Context, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w (pick another address with -http)", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", server.NewStreamableHTTPServer(mcpserver.New(), server.WithStateful(true)))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(os.Stderr, "example-mcpserver: serving http://%s/mcp\n", ln.Addr())
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
