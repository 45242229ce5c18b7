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

// checkLazyFrame fails unless what sendLazy writes for m is json.Marshal's
// encoding of m in a frame, byte for byte, and reports whether the frame
// was spelt by hand.
func checkLazyFrame(t testing.TB, m *message) (spelt bool) {
	t.Helper()
	want, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	got, spelt := appendLazyFrame(nil, m)
	if spelt && string(got) != string(want) {
		t.Errorf("appendLazyFrame: %s\njson.Marshal:    %s", got, want)
	}
	var wrote, frame bytes.Buffer
	fw := newFrameWriter(&wrote)
	if err := fw.sendLazy(m); err != nil {
		t.Fatal(err)
	}
	if err := fw.flush(); err != nil {
		t.Fatal(err)
	}
	ref := newFrameWriter(&frame)
	if err := ref.writeLocked(want, ""); err != nil {
		t.Fatal(err)
	}
	_ = ref.w.Flush()
	if wrote.String() != frame.String() {
		t.Errorf("sendLazy wrote %q, want %q", wrote.String(), frame.String())
	}
	return spelt
}

// TestLazyFrameIsMarshal: the call and compiled frames sendLazy spells by
// hand are json.Marshal's, byte for byte: every field present or left out,
// arguments with what json.Marshal escapes, and targets it would escape
// (those go to json.Marshal).
func TestLazyFrameIsMarshal(t *testing.T) {
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
	clocks := [][]int64{nil, {}, {0}, {1_700_000_000_000, -1, 42}}
	spelt := 0
	for _, runID := range []uint64{0, 1, 1 << 63} {
		for _, id := range []uint64{0, 7} {
			for _, to := range targets {
				for _, a := range args {
					for _, clk := range clocks {
						if checkLazyFrame(t, &message{T: msgCall, RunID: runID, ID: id, Target: to, Args: a, Clock: clk}) {
							spelt++
						}
					}
				}
			}
		}
		if !checkLazyFrame(t, &message{T: msgCompiled, RunID: runID}) {
			t.Errorf("a compiled frame went to json.Marshal")
		}
	}
	if spelt == 0 {
		t.Fatal("no frame was spelt by hand")
	}
	// Names json.Marshal escapes are left to it.
	for _, s := range []string{"a<b", "a&b", "\"", "\\", "caf\u00e9", "\x7f", "\x00", "\xff"} {
		for _, to := range []*bindings.Target{{ID: s}, {Namespace: s}, {Function: s}} {
			if checkLazyFrame(t, &message{T: msgCall, RunID: 1, ID: 1, Target: to}) {
				t.Errorf("target %+v was spelt by hand", to)
			}
		}
		if checkLazyFrame(t, &message{T: s}) {
			t.Errorf("type %q was spelt by hand", s)
		}
	}
}

// TestLazyFrameLeavesOtherFieldsToMarshal: a frame with any field
// appendLazyFrame does not spell goes to json.Marshal, so a field added to
// message later is never dropped from a lazy frame.
func TestLazyFrameLeavesOtherFieldsToMarshal(t *testing.T) {
	t.Parallel()
	spelt := map[string]bool{"T": true, "RunID": true, "ID": true, "Target": true, "Args": true, "Clock": true}
	typ := reflect.TypeOf(message{})
	for i := range typ.NumField() {
		f := typ.Field(i)
		if spelt[f.Name] {
			continue
		}
		m := &message{T: msgCall, RunID: 1}
		v := reflect.ValueOf(m).Elem().Field(i)
		switch v.Kind() {
		case reflect.Pointer:
			v.Set(reflect.New(f.Type.Elem()))
		case reflect.Slice:
			v.Set(reflect.ValueOf(json.RawMessage(`{}`)).Convert(f.Type))
		case reflect.Bool:
			v.SetBool(true)
		case reflect.Int, reflect.Int64:
			v.SetInt(1)
		case reflect.Uint64:
			v.SetUint(1)
		default:
			t.Fatalf("field %s: kind %s not covered by this test", f.Name, v.Kind())
		}
		if _, ok := appendLazyFrame(nil, m); ok {
			t.Errorf("a frame with %s set was spelt by hand, without it", f.Name)
		}
	}
}

// FuzzLazyFrameIsMarshal: for any string in a call's arguments and its
// target, sendLazy writes json.Marshal's bytes.
func FuzzLazyFrameIsMarshal(f *testing.F) {
	for _, s := range []string{"", "plain", "<&>", "\u2028\u2029", "\xe2\x80\xa8", "caf\u00e9", "\"\\", "\x00\x7f\xff"} {
		f.Add(s, "demo")
	}
	f.Fuzz(func(t *testing.T, s, name string) {
		args := stringifyJSON(t, map[string]any{"s": s, "a": []string{s, strings.ToUpper(s)}})
		checkLazyFrame(t, &message{T: msgCall, RunID: 3, ID: 9, Target: &bindings.Target{Kind: bindings.KindTool, ID: name + ":" + name, Namespace: name, Function: name}, Args: args, Clock: []int64{int64(len(s))}})
	})
}
