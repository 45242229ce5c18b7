package codemode

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/sandboxrt/sandbox/runtime"
)

// TestReportJSONIsMarshalsOutput: the report and the text block written by
// hand are byte for byte what json.Marshal writes, for every kind of text
// a console can hold.
func TestReportJSONIsMarshalsOutput(t *testing.T) {
	texts := []string{"", "plain", `quotes " and \ backslash`, "tab\tnew\nline\r\b\f\x00\x1f", "<b>&amp;</b>",
		"é ü 中文 😀", "line\u2028sep\u2029", "bad \xff\xfe utf8 \xe2\x82", `{"a":[1,"x"]}`}
	values := []string{``, `1`, `{"a":[1,2],"s":"<x>"}`, "{ \"spaced\" : [ 1 , 2 ] }", `"line\u2028"`, `"é\u2028"`}
	for _, v := range values {
		res := &ExecuteResult{
			Result: &runtime.Result{OK: v != "", Value: json.RawMessage(v), LogsTruncated: true, Duration: 1234567 * time.Nanosecond,
				Calls: []runtime.CallTrace{{Tool: "demo:a", Duration: time.Millisecond, OK: true}, {Tool: "demo:b<", Code: "TIMEOUT"}}},
			Bound:  []string{"demo.a", "demo.b"},
			Limits: AppliedLimits{TimeoutMs: 5, Clamped: []string{"timeoutMs"}},
		}
		if v == "" {
			res.Error = &runtime.Error{Kind: runtime.KindRuntime, Name: "Error", Message: "boom <&> \u2028", Line: 2, Column: 3, Stack: "at x"}
		}
		levels := []runtime.LogLevel{runtime.LevelLog, runtime.LevelInfo, runtime.LevelWarn, runtime.LevelError, runtime.LevelDebug}
		for i, text := range texts {
			res.Logs = append(res.Logs, runtime.LogEntry{Level: levels[i%len(levels)], Message: text})
		}
		want, err := json.Marshal(executeReport(res))
		if err != nil {
			t.Fatal(err)
		}
		got, err := reportJSON(res)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("value %s:\n got  %s\n want %s", v, got, want)
		}
		if cap(got) != len(got) {
			t.Errorf("the report's buffer is %d for %d bytes: not sized exactly", cap(got), len(got))
		}
		wantBlock, _ := json.Marshal(map[string]string{"type": "text", "text": string(got)})
		if block := textBlockJSON(got); !bytes.Equal(block, wantBlock) || cap(block) != len(block) {
			t.Fatalf("text block:\n got  %s\n want %s", block, wantBlock)
		}
	}
	// No logs, no value, no error.
	res := &ExecuteResult{Result: &runtime.Result{OK: true}}
	want, _ := json.Marshal(executeReport(res))
	if got, _ := reportJSON(res); !bytes.Equal(got, want) || cap(got) != len(got) {
		t.Fatalf("empty:\n got  %s\n want %s", got, want)
	}
}

func TestAppendJSONStringIsEncodingJSONs(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "\"", "\\", "\n", "\x00", "\x7f", "<", "&", "é", "\u2028", "\u2029", "😀", "\xff", "\xe2\x80", "\xed\xa0\x80"}
	for range 5000 {
		var b []byte
		for range rng.IntN(12) {
			b = append(b, alphabet[rng.IntN(len(alphabet))]...)
		}
		want, _ := json.Marshal(string(b))
		if got := appendJSONString(nil, "", b); !bytes.Equal(got, want) {
			t.Fatalf("%q:\n got  %s\n want %s", b, got, want)
		}
		if got := appendJSONString(nil, "", string(b)); !bytes.Equal(got, want) || jsonStringLen(b) != len(want) {
			t.Fatalf("%q: string form or length (%d) differ from %s", b, jsonStringLen(b), want)
		}
	}
}
