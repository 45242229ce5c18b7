package codemode

import (
	"testing"
	"time"

	"github.com/sandboxrt/sandbox/runtime"
)

// TestBusyByExpectedWaitSaysHowLong: a run refused because it would wait
// too long is told how long, the bound, and when to retry, in the message
// and in the data an agent's code reads.
func TestBusyByExpectedWaitSaysHowLong(t *testing.T) {
	ge := busyError(&runtime.BusyError{Running: 2, Waiting: 3, ExpectedWait: 4210 * time.Millisecond, MaxWait: 3 * time.Second, RetryAfter: 1300 * time.Millisecond})
	want := "the sandbox is running all the snippets it can at once (2) and 3 more are waiting; this snippet would wait about 4.2s for its turn, longer than the 3s a snippet may wait. " +
		"The snippet did not run; run it again in about 1.3s (an agent with fewer snippets running or waiting goes first)"
	if ge.Code != CodeBusy || ge.Message != want {
		t.Fatalf("message:\n%s\nwant\n%s", ge.Message, want)
	}
	if string(ge.Data) != `{"retryAfterMs":1300,"running":2,"waiting":3}` {
		t.Fatalf("data: %s", ge.Data)
	}
}
