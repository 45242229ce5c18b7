// Command embed is sandbox's Go API in one program: it loads an mcp.json,
// starts the gateway, finds the tools for a task and runs a snippet that
// calls them. From the repository's root:
//
//	go run ./examples/embed examples/mcp.json
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/sandboxrt/sandbox/codemode"
	"github.com/sandboxrt/sandbox/config"
	"github.com/sandboxrt/sandbox/gateway"
	"github.com/sandboxrt/sandbox/runtime"
)

func main() {
	runtime.ServeWorkerIfChild() // this binary is also the sandbox's worker process: first thing in main
	if err := run(context.Background(), os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "embed:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("usage: embed mcp.json")
	}
	file, err := config.Load(args[0]) // errors at file:line:col; or build a gateway.Config in Go
	if err != nil {
		return err
	}
	gw, err := gateway.New(file.Gateway)
	if err != nil {
		return err
	}
	defer gw.Close()
	if err := gw.Start(ctx); err != nil { // connects to every server; a failing one is reported, not fatal
		return err
	}
	rt, err := runtime.New(runtime.Options{}) // the worker pool
	if err != nil {
		return err
	}
	defer rt.Close()
	engine, err := codemode.New(gw, rt, file.CodeMode.Engine) // the "codeMode" block: k, index, embedder, limits
	if err != nil {
		return err
	}
	defer engine.Close()

	found, err := engine.Search(ctx, codemode.SearchRequest{Intent: "which tasks are blocked", K: 3})
	if err != nil {
		return err
	}
	fmt.Println(found.Declarations) // the .d.ts an agent codes against

	res, err := engine.Execute(ctx, codemode.ExecuteRequest{
		Code: `const r = await demo.searchTasks({ filter: { status: ["blocked"] } });
return r.tasks.map((t) => t.id);`,
	})
	if err != nil {
		return err // the run could not start; a snippet's own failure is in res
	}
	if !res.OK {
		return res.Error
	}
	fmt.Println(string(res.Value))
	return nil
}
