package codemode

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/sandboxrt/sandbox/gateway"
	"github.com/sandboxrt/sandbox/runtime"
)

// TestIdleThenBurst looks for issue 29's stall: the first run after serve
// had been idle ~40 s hit its time limit after four of its five calls had
// answered. Here the idle timers are short (a health check every 20 ms, so
// several fire in each idle spell; the workers build their next VM while
// idle), and each round idles, then sends a burst of 5-call snippets at
// once, over a stdio upstream process and an in-process one. Every run
// must finish; a run that stalls ends at its time limit, and its error
// names the call it was waiting for. SANDBOX_IDLE_BURST_ROUNDS runs it
// longer by hand.
func TestIdleThenBurst(t *testing.T) {
	t.Parallel()
	rounds := 3
	if n, err := strconv.Atoi(os.Getenv("SANDBOX_IDLE_BURST_ROUNDS")); err == nil && n > 0 {
		rounds = n
	}
	settings := gateway.DefaultSettings()
	settings.HealthInterval = 20 * time.Millisecond
	for _, upstream := range []string{"stdio", "inproc"} {
		t.Run(upstream, func(t *testing.T) {
			e := upstreamEngine(t, upstream, settings, runtime.Options{Workers: 2, MaxExpectedWait: -1})
			const burst = 12
			code := "const out = [];\nfor (let i = 0; i < 5; i++) out.push((await demo.listProjects({})).length);\nreturn out"
			for round := range rounds {
				time.Sleep(150 * time.Millisecond) // idle: health checks and worker prebuilds fire
				var wg sync.WaitGroup
				errs := make(chan error, burst)
				for range burst {
					wg.Add(1)
					go func() {
						defer wg.Done()
						res, err := e.Execute(context.Background(), ExecuteRequest{Code: code, Limits: runtime.Limits{Timeout: 20 * time.Second}})
						switch {
						case err != nil:
							errs <- err
						case !res.OK:
							errs <- fmt.Errorf("%s after %d calls", res.Error.Message, len(res.Calls))
						}
					}()
				}
				wg.Wait()
				close(errs)
				for err := range errs {
					t.Errorf("round %d: %v", round, err)
				}
			}
		})
	}
}
