package upstream

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// testDesk stages answers over 100 KB, up to maxBytes, in a folder of the
// test's, with a request waiting for a staged answer under each of ids.
func testDesk(t *testing.T, maxBytes int64, ids ...any) (*stagingDesk, string) {
	t.Helper()
	dir := t.TempDir()
	desk := newStagingDesk(Options{MaxResultBytes: 100_000, MaxStagedBytes: maxBytes, StageDir: func() (string, error) { return dir, nil }}, slog.New(slog.DiscardHandler))
	for _, id := range ids {
		t.Cleanup(desk.expect(mcp.NewRequestId(id)))
	}
	return desk, dir
}

// lines reads what a line reader hands mcp-go, line by line.
func readLines(t *testing.T, r io.Reader) []string {
	t.Helper()
	out, err := io.ReadAll(r)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
}

type response struct {
	ID    json.RawMessage `json:"id"`
	Error struct {
		Code int `json:"code"`
		Data struct {
			Token string `json:"token"`
			Size  int64  `json:"size"`
			Limit int64  `json:"limit"`
		} `json:"data"`
	} `json:"error"`
}

func decodeResponse(t *testing.T, line string) response {
	t.Helper()
	var r response
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		t.Fatalf("not a JSON-RPC response: %v: %.200s", err, line)
	}
	return r
}

func assertEmpty(t *testing.T, dir string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	if len(entries) != 0 {
		t.Errorf("%d files left in the staging folder", len(entries))
	}
}

// An answer over the memory cap is written to a file byte for byte (invalid
// UTF-8 included), and mcp-go reads a stand-in for the same id instead.
func TestLongAnswersAreStagedInFiles(t *testing.T) {
	t.Parallel()
	desk, dir := testDesk(t, 1<<20, "sbx-7")
	big := `{"result":{"content":[{"type":"text","text":"` + strings.Repeat("x\xff", 150_000) + `"}]},"jsonrpc":"2.0","id":"sbx-7"}` + "\n"
	input := `{"jsonrpc":"2.0","id":1,"result":{}}` + "\n" + big + `{"jsonrpc":"2.0","id":3,"result":{}}` + "\n"
	lines := readLines(t, newLineReader(strings.NewReader(input), 100_000, desk))
	if len(lines) != 3 || lines[0] != `{"jsonrpc":"2.0","id":1,"result":{}}` || lines[2] != `{"jsonrpc":"2.0","id":3,"result":{}}` {
		t.Fatalf("lines: %.300q", lines)
	}
	r := decodeResponse(t, lines[1])
	if string(r.ID) != `"sbx-7"` || r.Error.Code != stagedRPCCode || r.Error.Data.Size != int64(len(big)) {
		t.Fatalf("stand-in: %s", lines[1])
	}
	st, ok := desk.take(r.Error.Data.Token)
	if !ok {
		t.Fatal("the token does not take the staged answer")
	}
	if got, _ := os.ReadFile(st.Path); !bytes.Equal(got, []byte(big)) {
		t.Fatalf("the file holds %d bytes, not the answer's %d", len(got), len(big))
	}
	if _, again := desk.take(r.Error.Data.Token); again {
		t.Error("a staged answer was taken twice")
	}
	st.Remove()
	assertEmpty(t, dir)
}

// Past the desk's maxBytes the staged part is deleted; the id came first,
// so the too-large answer goes out before the line is over, and the rest
// of the line is skipped.
func TestAnswersPastTheStagingCapAreRefusedEarly(t *testing.T) {
	t.Parallel()
	desk, dir := testDesk(t, 300_000, int64(9))
	input := `{"jsonrpc":"2.0","id":9,"result":{"content":[{"type":"text","text":"` + strings.Repeat("y", 500_000) + `"}]}}` + "\n" + `{"jsonrpc":"2.0","id":10,"result":{}}` + "\n"
	lines := readLines(t, newLineReader(strings.NewReader(input), 100_000, desk))
	if len(lines) != 2 || lines[1] != `{"jsonrpc":"2.0","id":10,"result":{}}` {
		t.Fatalf("lines: %.300q", lines)
	}
	r := decodeResponse(t, lines[0])
	if string(r.ID) != "9" || r.Error.Code != tooLargeRPCCode || r.Error.Data.Limit != 300_000 {
		t.Fatalf("refusal: %s", lines[0])
	}
	assertEmpty(t, dir)
}

// endless is a server writing one line that never ends.
type endless struct{ head []byte }

func (e *endless) Read(p []byte) (int, error) {
	if len(e.head) > 0 {
		n := copy(p, e.head)
		e.head = e.head[n:]
		return n, nil
	}
	for i := range p {
		p[i] = 'z'
	}
	return len(p), nil
}

// A line that never ends is refused once it passes the cap (its id came
// first), and holds no more than the reader's buffer: the call does not
// wait for its timeout, and neither memory nor disk grows.
func TestALineThatNeverEndsIsRefusedAtTheCap(t *testing.T) {
	t.Parallel()
	desk, dir := testDesk(t, 1<<20, "sbx-1")
	r := newLineReader(&endless{head: []byte(`{"jsonrpc":"2.0","id":"sbx-1","result":{"content":[{"type":"text","text":"`)}, 100_000, desk)
	buf := make([]byte, 4096)
	done := make(chan error, 1)
	var n int
	go func() {
		var err error
		n, err = r.Read(buf)
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no answer for a line that never ends")
	}
	resp := decodeResponse(t, strings.TrimSpace(string(buf[:n])))
	if string(resp.ID) != `"sbx-1"` || resp.Error.Code != tooLargeRPCCode || resp.Error.Data.Size <= 1<<20 {
		t.Fatalf("refusal: %s", buf[:n])
	}
	assertEmpty(t, dir)
}

// A server that dies mid-line leaves no file, and its half answer is not
// handed on.
func TestAServerThatDiesMidLineLeavesNothing(t *testing.T) {
	t.Parallel()
	desk, dir := testDesk(t, 1<<20, int64(2))
	input := `{"jsonrpc":"2.0","id":1,"result":{}}` + "\n" + `{"jsonrpc":"2.0","id":2,"result":{"content":"` + strings.Repeat("w", 400_000)
	out, err := io.ReadAll(newLineReader(strings.NewReader(input), 100_000, desk))
	if err != nil || string(out) != `{"jsonrpc":"2.0","id":1,"result":{}}`+"\n" {
		t.Fatalf("%v: %.200q", err, out)
	}
	assertEmpty(t, dir)
}

// With no request waiting for a staged answer, nothing is written to disk:
// the long line is skipped and refused at the memory cap, as a long
// notification is dropped.
func TestNothingIsStagedForNobody(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	desk := newStagingDesk(Options{MaxResultBytes: 100_000, MaxStagedBytes: 1 << 20, StageDir: func() (string, error) { return dir, nil }}, slog.New(slog.DiscardHandler))
	input := `{"jsonrpc":"2.0","id":4,"result":"` + strings.Repeat("v", 200_000) + `"}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"` + strings.Repeat("n", 200_000) + `"}}` + "\n"
	lines := readLines(t, newLineReader(strings.NewReader(input), 100_000, desk))
	if len(lines) != 1 {
		t.Fatalf("lines: %.300q", lines)
	}
	if r := decodeResponse(t, lines[0]); string(r.ID) != "4" || r.Error.Code != tooLargeRPCCode || r.Error.Data.Limit != 100_000 {
		t.Fatalf("refusal: %s", lines[0])
	}
	assertEmpty(t, dir)
}

// Staged answers their requests never took (the caller left) are removed
// when the next is staged, and all of them when the connection closes.
func TestUntakenAnswersAreRemoved(t *testing.T) {
	t.Parallel()
	desk, dir := testDesk(t, 1<<20, "sbx-1")
	stage := func() *Staged {
		f, err := desk.create()
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		return &Staged{Path: f.Name()}
	}
	old := stage()
	desk.hand(old)
	desk.mu.Lock()
	for tok, e := range desk.staged {
		e.at = e.at.Add(-2 * stagedOrphanAge)
		desk.staged[tok] = e
	}
	desk.mu.Unlock()
	desk.hand(stage())
	if _, err := os.Stat(old.Path); !os.IsNotExist(err) {
		t.Errorf("an orphan older than %s is still there: %v", stagedOrphanAge, err)
	}
	desk.close()
	assertEmpty(t, dir)
	late := stage()
	desk.hand(late) // after close: removed at once
	assertEmpty(t, dir)
}

// An answer staged for a request that no longer awaits it (its caller
// left while the line was read) is not kept for nobody: its file is
// removed as soon as the line ends, and it is refused at the memory cap,
// as for a request that takes no staged answer. One a request awaits is
// staged, whatever escapes spell its id.
func TestAnswersNobodyAwaitsAreNotKept(t *testing.T) {
	t.Parallel()
	desk, dir := testDesk(t, 1<<20, "sbx-1")
	answer := func(id string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"result":"` + strings.Repeat("v", 200_000) + `"}`
	}
	input := answer(`"sbx-2"`) + "\n" + answer(`"sbx\u002d1"`) + "\n"
	lines := readLines(t, newLineReader(strings.NewReader(input), 100_000, desk))
	if len(lines) != 2 {
		t.Fatalf("lines: %.300q", lines)
	}
	if r := decodeResponse(t, lines[0]); string(r.ID) != `"sbx-2"` || r.Error.Code != tooLargeRPCCode || r.Error.Data.Limit != 100_000 {
		t.Fatalf("the answer nobody awaits: %s", lines[0])
	}
	r := decodeResponse(t, lines[1])
	st, ok := desk.take(r.Error.Data.Token)
	if r.Error.Code != stagedRPCCode || !ok {
		t.Fatalf("the awaited answer: %s", lines[1])
	}
	st.Remove()
	assertEmpty(t, dir)
}

// A line staged while a staged answer was awaited, that turns out not to
// be an answer, is handed on whole when it is within the memory cap, and
// dropped when it is not.
func TestAStagedNotificationIsHandedOn(t *testing.T) {
	t.Parallel()
	desk, dir := testDesk(t, 8<<20, "sbx-1")
	note := `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"` + strings.Repeat("n", 1500_000) + `"}}`
	out, err := io.ReadAll(newLineReader(strings.NewReader(note+"\n"), 2<<20, desk)) // staged past 1 MiB
	if err != nil || string(out) != note+"\n" {
		t.Fatalf("a staged notification within the cap: %d bytes, %v", len(out), err)
	}
	assertEmpty(t, dir)
	out, err = io.ReadAll(newLineReader(strings.NewReader(note+"\n"), 1<<20, desk)) // over the cap
	if err != nil || len(out) != 0 {
		t.Fatalf("a notification over the cap was handed on: %d bytes, %v", len(out), err)
	}
	assertEmpty(t, dir)
}

// A staged answer for a request that takes none is read back when it is
// within the memory cap, and too large otherwise.
func TestUnstagedAnswersAreReadBack(t *testing.T) {
	t.Parallel()
	desk, dir := testDesk(t, 1<<20, "sbx-1")
	c := &Conn{s: &Supervisor{opts: Options{MaxResultBytes: 100_000}}, desk: desk}
	stage := func(body string) *Staged {
		f, err := desk.create()
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(body)
		f.Close()
		return &Staged{Path: f.Name(), Size: int64(len(body))}
	}
	raw, err := c.unstage(stage(`{"result":{"tools":[]},"jsonrpc":"2.0","id":"sbx-1"}` + "\n"))
	if err != nil || string(raw) != `{"tools":[]}` {
		t.Fatalf("read back: %s %v", raw, err)
	}
	if _, err := c.unstage(stage(`{"jsonrpc":"2.0","id":2,"error":{"code":-32000,"message":"nope"}}`)); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Fatalf("an error answer: %v", err)
	}
	if _, err := c.unstage(stage(`{"jsonrpc":"2.0","id":3,"result":"` + strings.Repeat("b", 200_000) + `"}`)); !errors.Is(err, ErrResultTooLarge) {
		t.Fatalf("over the cap: %v", err)
	}
	assertEmpty(t, dir)
}

// FuzzStagingLineReader: whatever a server writes, with a staged answer
// awaited, every stand-in's file holds exactly a line of the input, and
// once they are taken nothing is left on disk.
func FuzzStagingLineReader(f *testing.F) {
	f.Add([]byte(`{"id":1,"result":"`+strings.Repeat("a", 300)+`"}`+"\n{\"id\":2,\"result\":{}}\n"), 64, 1000)
	f.Add([]byte(`{"result":{"x":"\"id\":9"},"id":"q"}`), 8, 20)
	f.Fuzz(func(t *testing.T, data []byte, max, staged int) {
		if max < 1 || max > 1<<16 || staged <= max || staged > 1<<20 {
			return
		}
		dir := t.TempDir()
		desk := newStagingDesk(Options{MaxResultBytes: int64(max), MaxStagedBytes: int64(staged), StageDir: func() (string, error) { return dir, nil }}, slog.New(slog.DiscardHandler))
		defer desk.expect(mcp.NewRequestId("q"))()
		out, err := io.ReadAll(newLineReader(bytes.NewReader(data), int64(max), desk))
		if err != nil {
			t.Fatal(err)
		}
		lines := bytes.SplitAfter(data, []byte("\n"))
		for _, line := range bytes.Split(out, []byte("\n")) {
			var r response
			if json.Unmarshal(line, &r) != nil || r.Error.Code != stagedRPCCode {
				continue
			}
			st, ok := desk.take(r.Error.Data.Token)
			if !ok {
				t.Fatalf("a stand-in's token takes nothing: %s", line)
			}
			got, _ := os.ReadFile(st.Path)
			st.Remove()
			found := false
			for _, l := range lines {
				found = found || bytes.Equal(l, got)
			}
			if !found {
				t.Fatalf("a staged file holds %q, no line of the input", got)
			}
		}
		assertEmpty(t, dir)
	})
}
