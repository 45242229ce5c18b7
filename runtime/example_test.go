package runtime_test

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/sandboxrt/sandbox/runtime"
)

// A snippet calls a tool bound as weather.forecast; the host answers it.
// (This example runs in-process; untrusted code belongs in the default worker
// isolation, which needs runtime.ServeWorkerIfChild in main.)
func Example() {
	rt, err := runtime.New(runtime.Options{Isolation: runtime.InProcess})
	if err != nil {
		panic(err)
	}
	defer rt.Close()

	host := runtime.HostFunc(func(ctx context.Context, call runtime.ToolCall) (json.RawMessage, error) {
		var args struct{ City string }
		_ = json.Unmarshal(call.Arguments, &args)
		return json.RawMessage(fmt.Sprintf(`{"city":%q,"tempC":21}`, args.City)), nil
	})
	res, err := rt.Run(context.Background(), runtime.Request{
		Code: `
const cities = ["Oslo", "Lima"];
const all = await Promise.all(cities.map((city) => weather.forecast({ city })));
console.log("fetched", all.length);
return all.map((f) => f.city + ": " + f.tempC + "°C");`,
		Tools:  []runtime.Tool{{ID: "weather:forecast", Namespace: "weather", Function: "forecast"}},
		Host:   host,
		Limits: runtime.Limits{Timeout: 5 * time.Second},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(string(res.Value))
	fmt.Println(res.Logs[0].Message, len(res.Calls), "calls")
	// Output:
	// ["Oslo: 21°C","Lima: 21°C"]
	// fetched 2 2 calls
}

// A failed run still has a Result: the error is located in the snippet.
func Example_error() {
	rt, _ := runtime.New(runtime.Options{Isolation: runtime.InProcess})
	defer rt.Close()
	res, _ := rt.Run(context.Background(), runtime.Request{
		Filename: "agent.ts",
		Code:     "const items: number[] = [];\nreturn items[0].toFixed(2);",
	})
	fmt.Println(res.OK, res.Error.Kind, res.Error.Line)
	fmt.Println(res.Error.Error())
	// Output:
	// false runtime 2
	// agent.ts:2:14: TypeError: Cannot read properties of undefined or null (reading 'toFixed')
}

// A run that keeps a journal is suspended while its call waits for a
// person, and resumed later by replaying its snippet against the journal:
// the calls it made before are answered from the journal, and the call
// that waited runs now.
func ExampleSuspend() {
	rt, _ := runtime.New(runtime.Options{Isolation: runtime.InProcess})
	defer rt.Close()
	approved := false
	var journal *runtime.Journal
	host := runtime.HostFunc(func(ctx context.Context, call runtime.ToolCall) (json.RawMessage, error) {
		if call.Target.Tool == "files:remove" && !approved {
			runtime.Suspend(ctx, func(j *runtime.Journal) { journal = j })
			<-ctx.Done() // the run ends; this answer is never delivered
			return nil, ctx.Err()
		}
		fmt.Println("host runs", call.Target.Tool)
		return json.RawMessage(`"done"`), nil
	})
	req := runtime.Request{
		Code:    `const names = await files.list({}); console.log("listed"); return await files.remove({})`,
		Tools:   []runtime.Tool{{ID: "files:list", Namespace: "files", Function: "list"}, {ID: "files:remove", Namespace: "files", Function: "remove"}},
		Host:    host,
		Journal: &runtime.Journal{},
	}
	first, _ := rt.Run(context.Background(), req)
	fmt.Println(first.Error.Kind, len(journal.Calls), "calls journalled")

	approved = true // the person said yes: replay
	req.Journal = journal
	res, _ := rt.Run(context.Background(), req)
	fmt.Println(string(res.Value), len(res.Logs), "console line")
	// Output:
	// host runs files:list
	// suspended 2 calls journalled
	// host runs files:remove
	// "done" 1 console line
}
