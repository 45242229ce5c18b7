package gateway

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// TestProgressIsNeverRelayedAfterTheCallEnds: a progress notification that
// is being relayed while the call ends either finishes before the call
// returns or is dropped. Otherwise the front end writes it after the call's
// response (seen in TestStdioNotificationsPrecedeTheResponse under load).
func TestProgressIsNeverRelayedAfterTheCallEnds(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		c := &connection{progress: map[string]*progressWatch{}}
		ended := false
		relayed := make(chan bool, 1)
		stop := c.watchProgress("tok", func(Progress) {
			time.Sleep(time.Second) // a slow client write
			relayed <- ended
		})
		note := mcp.JSONRPCNotification{}
		note.Method = string(mcp.MethodNotificationProgress)
		note.Params.AdditionalFields = map[string]any{"progressToken": "tok", "progress": 1}
		go c.onNotification(note)
		synctest.Wait() // the relay is under way, blocked in the write
		stop()          // the call ends
		ended = true
		if afterEnd := <-relayed; afterEnd {
			t.Fatal("a progress notification was relayed after the call ended")
		}
		// Once the call has ended, nothing more is relayed.
		go c.onNotification(note)
		synctest.Wait()
		select {
		case <-relayed:
			t.Fatal("a notification for an ended call was relayed")
		default:
		}
	})
}
