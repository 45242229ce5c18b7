package upstream

import (
	"strings"
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
		c := &Conn{progress: map[string]*progressWatch{}}
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

// TestDecodeListPage: a list result's items of the field asked for, each
// raw, and its cursor; anything else in the result is ignored; what is not
// a list result is an error that says so.
func TestDecodeListPage(t *testing.T) {
	for _, c := range []struct {
		raw, field string
		items      []string
		next, err  string
	}{
		{raw: `{"tools":[{"name":"a"}, {"name":"b","x":[1,{"y":"]"}]}],"nextCursor":"c2"}`, field: "tools", items: []string{`{"name":"a"}`, `{"name":"b","x":[1,{"y":"]"}]}`}, next: "c2"},
		{raw: `{"prompts":"odd","tools":[],"_meta":{"k":[1,2]}}`, field: "tools", items: []string{}},
		{raw: `{"tools":null,"nextCursor":null}`, field: "tools"},
		{raw: `{"resources":[{"uri":"x"}],"nextCursor":7}`, field: "resources", items: []string{`{"uri":"x"}`}},
		{raw: `{"tools":[1],"tools":[2]}`, field: "tools", items: []string{`2`}}, // the last wins, as encoding/json's
		{raw: `{"tools":{"name":"a"}}`, field: "tools", err: `"tools" is not an array`},
		{raw: `["tools"]`, field: "tools", err: "not a JSON object"},
		{raw: `{"tools":[]} {}`, field: "tools", err: "not a JSON object"},
		{raw: `{"tools":[`, field: "tools", err: "not a JSON object"},
		{raw: ``, field: "tools", err: "not a JSON object"},
	} {
		items, next, err := decodeListPage([]byte(c.raw), c.field)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v, want %q", c.raw, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.raw, err)
			continue
		}
		got := []string{}
		for _, it := range items {
			got = append(got, string(it))
		}
		if len(got) != len(c.items) || strings.Join(got, "|") != strings.Join(c.items, "|") || next != c.next {
			t.Errorf("%s: items %q next %q, want %q %q", c.raw, got, next, c.items, c.next)
		}
	}
}

// TestBusyIsNotHung: a health check that timed out means a hung server only
// if nothing arrived from it during the check; with calls in flight and
// answers arriving, it is busy. Bytes arriving are recorded by the reader
// the stdio transport reads through. (The gateway's TestHungServerIsRestarted
// checks a real frozen server, which still drains its input, is restarted.)
func TestBusyIsNotHung(t *testing.T) {
	t.Parallel()
	c := &Conn{}
	checked := time.Now().Add(-time.Millisecond) // the check started a moment ago
	r := activityReader{r: strings.NewReader("{}\n"), at: &c.activity}
	if c.busySince(checked, 3) {
		t.Fatal("busy with nothing arrived during the check")
	}
	if _, err := r.Read(make([]byte, 8)); err != nil {
		t.Fatal(err)
	}
	if !c.busySince(checked, 3) {
		t.Fatal("not busy although an answer arrived during the check with calls in flight")
	}
	if c.busySince(checked, 0) {
		t.Fatal("busy with no call in flight")
	}
	if !c.aliveWithin(time.Minute) {
		t.Fatal("bytes that just arrived do not prove the server alive")
	}
}
