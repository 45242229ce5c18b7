package upstream

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
)

func TestLineReaderReplacesOversizedResponses(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", 300_000)
	input := `{"jsonrpc":"2.0","id":1,"result":{"ok":true}}` + "\n" +
		`{"result":{"content":[{"type":"text","text":"` + big + `"}]},"jsonrpc":"2.0","id":"sbx-7"}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"` + big + `"}}` + "\n" +
		`{"jsonrpc":"2.0","id":3,"result":{}}` + "\n"
	r := newLineReader(strings.NewReader(input), 100_000, nil)
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 3 {
		t.Fatalf("got %d lines: %.300s", len(lines), out)
	}
	if lines[0] != `{"jsonrpc":"2.0","id":1,"result":{"ok":true}}` || lines[2] != `{"jsonrpc":"2.0","id":3,"result":{}}` {
		t.Fatalf("small lines changed: %q / %q", lines[0], lines[2])
	}
	var resp struct {
		ID    string `json:"id"`
		Error struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(lines[1]), &resp); err != nil {
		t.Fatalf("replacement is not JSON: %v: %s", err, lines[1])
	}
	if resp.ID != "sbx-7" || resp.Error.Code != tooLargeRPCCode {
		t.Fatalf("replacement = %s", lines[1])
	}
}

func TestIDScanner(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		`{"jsonrpc":"2.0","id":12,"result":{}}`:                           `12`,
		`{"result":{"id":99,"x":"\"id\":5"},"id":"a\"b","jsonrpc":"2.0"}`: `"a\"b"`,
		`{ "id" : 7 , "error":{}}`:                                        `7`,
		`{"method":"x","params":{"id":1}}`:                                ``,
		`{"result":[{"id":2}],"id":-3.5}`:                                 `-3.5`,
		// Keys as an encoder that escapes letters writes them.
		`{"\u0069d":4,"r\u0065s\u0075lt":{}}`:             `4`,
		`{"\u0069\u0064":"\u0061","j":1,"\u0065rror":{}}`: `"\u0061"`,
		`{"\\u0069d":5,"result":{}}`:                      ``,
	}
	for in, want := range cases {
		// Feed in odd-sized pieces to exercise the incremental state.
		s := &idScanner{}
		for i := 0; i < len(in); i += 3 {
			s.feed([]byte(in[i:min(i+3, len(in))]))
		}
		if string(s.id) != want {
			t.Errorf("%s: id = %q, want %q", in, s.id, want)
		}
		if want != "" && !s.isResponse {
			t.Errorf("%s: not read as a response", in)
		}
	}
}

// FuzzLineReader: whatever the input, output lines under the cap are
// passed through unchanged and nothing longer than the cap (plus the fixed
// replacement) comes out.
func FuzzLineReader(f *testing.F) {
	f.Add([]byte("{\"id\":1,\"result\":\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"}\nshort\n"), 16)
	f.Add([]byte("{\"result\":{\"a\":\"\\\"id\\\":\"},\"id\":\"q\"}\n"), 8)
	f.Fuzz(func(t *testing.T, data []byte, max int) {
		if max < 1 || max > 1<<16 {
			return
		}
		out, err := io.ReadAll(newLineReader(bytes.NewReader(data), int64(max), nil))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range bytes.SplitAfter(out, []byte("\n")) {
			if len(line) > max && !bytes.Contains(line, []byte("result cap")) {
				t.Fatalf("line of %d bytes passed a cap of %d", len(line), max)
			}
		}
	})
}

// TestStdioServersInheritOnlyASafeEnvironment: a stdio server sees the
// variables its "env" gives it and a small safe set of the gateway's, not
// every secret the gateway was started with.
func TestStdioServersInheritOnlyASafeEnvironment(t *testing.T) {
	t.Setenv("SANDBOX_TEST_SECRET", "do-not-leak")
	env := childEnv(map[string]string{"GIVEN": "yes"})
	joined := strings.Join(env, "\n")
	if strings.Contains(joined, "do-not-leak") {
		t.Fatal("an unlisted variable leaked into the child's environment")
	}
	if !strings.Contains(joined, "GIVEN=yes") || !strings.Contains(joined, "PATH=") {
		t.Fatalf("env = %v", env)
	}
}

// A string id that goes on and on is not kept: the scanner holds at most
// the longest id it would take, however much of a long line is the id.
func TestIDScannerHoldsNoLongID(t *testing.T) {
	t.Parallel()
	s := &idScanner{}
	s.feed([]byte(`{"jsonrpc":"2.0","id":"`))
	chunk := bytes.Repeat([]byte("a"), 64<<10)
	for range 160 { // 10 MiB of one id
		s.feed(chunk)
	}
	if cap(s.val) > 4<<10 {
		t.Fatalf("the scanner holds %d bytes of an id still being read", cap(s.val))
	}
	s.feed([]byte(`","result":{}}`))
	if s.id != nil || !s.isResponse {
		t.Fatalf("id = %.40q, isResponse = %v: an id too long to be ours is no id", s.id, s.isResponse)
	}
}
