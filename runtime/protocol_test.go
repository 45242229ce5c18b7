package runtime

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/sandboxrt/sandbox/runtime/internal/bindings"
)

// stringifyJSON is what the VM's serialization writes for v: compact,
// nothing escaped for HTML (JSON.stringify's bytes).
func stringifyJSON(t testing.TB, v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	// encoding/json escapes U+2028 and U+2029 even then; JSON.stringify
	// does not.
	src, out := bytes.TrimSuffix(b.Bytes(), []byte("\n")), []byte{}
	for i := 0; i < len(src); i++ {
		if src[i] != '\\' {
			out = append(out, src[i])
			continue
		}
		if esc := string(src[i:min(i+6, len(src))]); esc == `\u2028` || esc == `\u2029` {
			out = append(out, "\u2028\u2029"[3*(esc[5]-'8'):][:3]...)
			i += 5
			continue
		}
		out = append(out, src[i], src[i+1])
		i++
	}
	return out
}

// checkFrame fails unless what send and sendLazy write for m is
// json.Marshal's encoding of m in a frame, byte for byte, and reports
// whether the frame was spelt by hand.
func checkFrame(t testing.TB, m *message) (spelt bool) {
	t.Helper()
	want, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	got, spelt := appendFrame(nil, m)
	if spelt && string(got) != string(want) {
		t.Errorf("appendFrame:  %s\njson.Marshal: %s", got, want)
	}
	var frame bytes.Buffer
	ref := newFrameWriter(&frame)
	if err := ref.writeLocked(want, ""); err != nil {
		t.Fatal(err)
	}
	_ = ref.w.Flush()
	for _, lazy := range []bool{false, true} {
		var wrote bytes.Buffer
		fw := newFrameWriter(&wrote)
		send := fw.send
		if lazy {
			send = fw.sendLazy
		}
		// Twice: the second frame is spelt in the first one's buffer.
		for range 2 {
			wrote.Reset()
			if err := send(m); err != nil {
				t.Fatal(err)
			}
			if err := fw.flush(); err != nil {
				t.Fatal(err)
			}
			if wrote.String() != frame.String() {
				t.Errorf("lazy %v: wrote %q, want %q", lazy, wrote.String(), frame.String())
			}
		}
	}
	return spelt
}

// TestFrameIsMarshal: the call, compiled and done frames the worker spells
// by hand are json.Marshal's, byte for byte: every field present or left
// out, arguments and values with what json.Marshal escapes, and targets it
// would escape (those go to json.Marshal).
func TestFrameIsMarshal(t *testing.T) {
	t.Parallel()
	targets := []*bindings.Target{
		nil,
		{},
		{Kind: bindings.KindTool, ID: "demo:list_projects", Namespace: "demo", Function: "listProjects"},
		{Kind: bindings.KindMember, Namespace: "gh", Function: "search"},
		{Kind: bindings.KindService, Namespace: "store", Function: "get"},
		{Kind: 255, ID: "a b~!"},
	}
	args := []json.RawMessage{
		nil,
		json.RawMessage(`{}`),
		json.RawMessage(`[]`),
		stringifyJSON(t, map[string]any{"state": "open", "limit": 20, "n": []any{1, 2.5e3, nil, true}}),
		stringifyJSON(t, map[string]string{"<b>": "a & b > c", "q": "\u2028 line \u2029 para \u2027\u202a", "e": "caf\u00e9 \u2603 \U0001F600"}),
		stringifyJSON(t, []string{"\"quoted\" \\ \n\t\x01", "\xe2\x80", "\xe2"}),
		json.RawMessage(`{"s":"\u003c already escaped \u2028 \\u2029"}`),
	}
	if !bytes.Contains(args[4], []byte("\u2029")) || !bytes.Contains(args[4], []byte("<b>")) {
		t.Fatalf("the arguments hold nothing json.Marshal escapes: %s", args[4])
	}
	values := append(args, json.RawMessage(`"<a&b>"`), json.RawMessage(`12.5`), json.RawMessage(`null`), json.RawMessage("\"\u2028\""))
	clocks := [][]int64{nil, {}, {0}, {1_700_000_000_000, -1, 42}}
	spelt := 0
	for _, runID := range []uint64{0, 1, 1 << 63} {
		for _, id := range []uint64{0, 7} {
			for _, to := range targets {
				for _, a := range args {
					for _, clk := range clocks {
						if checkFrame(t, &message{T: msgCall, RunID: runID, ID: id, Target: to, Args: a, Clock: clk}) {
							spelt++
						}
					}
				}
			}
		}
		if !checkFrame(t, &message{T: msgCompiled, RunID: runID}) {
			t.Errorf("a compiled frame went to json.Marshal")
		}
		for _, v := range values {
			for _, clk := range clocks {
				for _, retire := range []bool{false, true} {
					if !checkFrame(t, &message{T: msgDone, RunID: runID, Outcome: &execOutcome{Value: v, Clock: clk}, Retire: retire}) {
						t.Errorf("a done frame with value %s went to json.Marshal", v)
					}
				}
			}
		}
		// The frames the parent sends on the way: cancel, clock.
		checkFrame(t, &message{T: msgCancel, RunID: runID})
		checkFrame(t, &message{T: msgClock, RunID: runID, Stopped: runID == 1})
	}
	if spelt == 0 {
		t.Fatal("no call frame was spelt by hand")
	}
	// Names json.Marshal escapes are spelt with its escapes (checkFrame
	// compares the bytes), invalid UTF-8 included.
	for _, s := range []string{"a<b", "a&b", "\"", "\\", "caf\u00e9", "\x7f", "\x00", "\xff", "\u2028", "\U0001F600"} {
		for _, to := range []*bindings.Target{{ID: s}, {Namespace: s}, {Function: s}} {
			if !checkFrame(t, &message{T: msgCall, RunID: 1, ID: 1, Target: to}) {
				t.Errorf("target %+v went to json.Marshal", to)
			}
		}
		if !checkFrame(t, &message{T: s}) {
			t.Errorf("type %q went to json.Marshal", s)
		}
	}
	// And frames with anything else: a failed run, a ready frame.
	checkFrame(t, &message{T: msgDone, RunID: 1, Outcome: &execOutcome{Error: &Error{Kind: KindLimit, Message: "<too> long"}, DroppedLogs: 3}})
	checkFrame(t, &message{T: msgReady, PID: 4242})
}

// TestFrameLeavesOtherFieldsToMarshal: a frame with any field appendFrame
// does not spell, in the message or its outcome, goes to json.Marshal, so a
// field added to either later is never dropped from a frame.
func TestFrameLeavesOtherFieldsToMarshal(t *testing.T) {
	t.Parallel()
	spelt := map[string]bool{"T": true, "RunID": true, "ID": true, "Target": true, "Args": true, "Clock": true, "Outcome": true, "Retire": true}
	typ := reflect.TypeOf(message{})
	for i := range typ.NumField() {
		f := typ.Field(i)
		if spelt[f.Name] {
			continue
		}
		m := &message{T: msgCall, RunID: 1}
		setNonZero(t, f, reflect.ValueOf(m).Elem().Field(i))
		if _, ok := appendFrame(nil, m); ok {
			t.Errorf("a frame with %s set was spelt by hand, without it", f.Name)
		}
	}
	spelt = map[string]bool{"Value": true, "Clock": true}
	typ = reflect.TypeOf(execOutcome{})
	for i := range typ.NumField() {
		f := typ.Field(i)
		if spelt[f.Name] {
			continue
		}
		m := &message{T: msgDone, RunID: 1, Outcome: &execOutcome{Value: json.RawMessage(`1`)}}
		setNonZero(t, f, reflect.ValueOf(m.Outcome).Elem().Field(i))
		if _, ok := appendFrame(nil, m); ok {
			t.Errorf("a done frame with the outcome's %s set was spelt by hand, without it", f.Name)
		}
	}
}

// setNonZero sets v, field f, to a value json.Marshal does not omit.
func setNonZero(t *testing.T, f reflect.StructField, v reflect.Value) {
	t.Helper()
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(f.Type.Elem()))
	case reflect.Slice:
		v.Set(reflect.MakeSlice(f.Type, 1, 1))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64:
		v.SetInt(1)
	case reflect.Uint64:
		v.SetUint(1)
	default:
		t.Fatalf("field %s: kind %s not covered by this test", f.Name, v.Kind())
	}
}

// FuzzFrameIsMarshal: for any string in a call's arguments and its target,
// and in a run's value, the frames are json.Marshal's bytes.
func FuzzFrameIsMarshal(f *testing.F) {
	for _, s := range []string{"", "plain", "<&>", "\u2028\u2029", "\xe2\x80\xa8", "caf\u00e9", "\"\\", "\x00\x7f\xff"} {
		f.Add(s, "demo")
	}
	f.Fuzz(func(t *testing.T, s, name string) {
		args := stringifyJSON(t, map[string]any{"s": s, "a": []string{s, strings.ToUpper(s)}})
		checkFrame(t, &message{T: msgCall, RunID: 3, ID: 9, Target: &bindings.Target{Kind: bindings.KindTool, ID: name + ":" + name, Namespace: name, Function: name}, Args: args, Clock: []int64{int64(len(s))}})
		checkFrame(t, &message{T: msgDone, RunID: 3, Outcome: &execOutcome{Value: args}})
	})
}

// BenchmarkCallFrameEncode: a call frame of the five-call snippet, as
// json.Marshal wrote it and as sendLazy spells it.
func BenchmarkCallFrameEncode(b *testing.B) {
	m := &message{T: msgCall, RunID: 12345, ID: 3,
		Target: &bindings.Target{Kind: bindings.KindTool, ID: "demo:list_projects", Namespace: "demo", Function: "listProjects"},
		Args:   json.RawMessage(`{"status":"active","limit":20}`)}
	b.Run("marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(m); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("spelt", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		for b.Loop() {
			var ok bool
			if buf, ok = appendFrame(buf[:0], m); !ok {
				b.Fatal("not spelt")
			}
		}
	})
}
