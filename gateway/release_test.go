package gateway

import (
	"context"
	"testing"
)

// TestWithoutReleaseKeepsEveryQuestion: a run the front end put back in a
// worker is never released again, whatever its calls' contexts say.
func TestWithoutReleaseKeepsEveryQuestion(t *testing.T) {
	release := ReleaseFunc(func(func([]byte)) bool { return true })
	ask := asApprovalAsk(WithRelease(context.Background(), release))
	if ReleaseFor(ask) == nil {
		t.Fatal("an approval's question of a releasable run cannot be released")
	}
	held := asApprovalAsk(WithRelease(WithoutRelease(context.Background()), release))
	if ReleaseFor(held) != nil {
		t.Error("a run put back in a worker can be released again")
	}
	if ReleaseFor(WithRelease(context.Background(), release)) != nil {
		t.Error("a question other than an approval's can be released")
	}
}
