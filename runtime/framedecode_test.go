package runtime

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/sandboxrt/sandbox/runtime/internal/bindings"
)

// callFrameSeeds are frames as a worker writes them, and near misses.
var callFrameSeeds = []string{
	`{"t":"call","run":5,"id":3,"to":{"k":1,"id":"demo:list_projects","ns":"demo","fn":"listProjects"},"args":{"state":"open","limit":20}}`,
	`{"t":"call","run":1,"id":1,"to":{"k":2,"ns":"gh","fn":"search"},"args":{"q":"a \"quoted\" \\ string","n":[1,2.5e3,{"x":null}]}}`,
	`{"t":"call","run":1,"id":1,"to":{"k":3,"ns":"store","fn":"get"},"args":{"key":"caf\u00e9 ☕"}}`,
	`{"t":"call","run":18446744073709551615,"id":0,"args":{}}`,
	`{"t":"reply","run":1,"id":2,"tail":17}`,
	`{"t":"started","run":7}`,
	`{"t":"call","run":1,"id":1,"args":{"a":1},"args":{"a":2}}`,
	`{"t":"call","run":01,"id":1,"args":{}}`,
	`{"t":"call","run":-1,"id":1,"args":{}}`,
	`{"t":"call","run":18446744073709551616,"id":1,"args":{}}`,
	`{"t":"call","run":1,"id":1,"to":{"k":256},"args":{}}`,
	`{"t":"call","run":1,"id":1,"to":null,"args":null}`,
	`{"t":"call","RUN":1,"Id":2,"args":{}}`,
	`{"t":"call","run":1,"id":1,"args":{"a":1}}x`,
	`{"t":"call","run":1,"id":1,"args":{"a":}}`,
	`{"t":"call","run":1,"id":1,"args":[1,2}`,
	`{"t":"call", "run":1,"id":1,"args":{}}`,
	`{"t":"\u0063all","run":1,"id":1,"args":{}}`,
	`{"t":"log","run":1,"log":{"level":"log","message":""},"tail":4}`,
	`{"t":"done","run":1,"outcome":{"value":1}}`,
	`{"t":"call","run":1,"id":1,"args":{"s":"\"}"},"tail":0}`,
	`{"t":"call","run":1,"id":1,"to":{"k":1,"id":"a","id":"b"},"args":{}}`,
	`{"t":"call","run":1,"id":1,"to":{"k":1,"x":"a"},"args":{}}`,
	`{}`,
	`[]`,
	``,
}

// TestCallFrameDecodesAsJSON: the frames a worker writes most take the
// quick path, and decode to what json.Unmarshal makes of them.
func TestCallFrameDecodesAsJSON(t *testing.T) {
	t.Parallel()
	for _, f := range callFrameSeeds {
		sameAsJSON(t, []byte(f))
	}
	args := json.RawMessage(`{"state":"open","tags":["a","b"],"q":"x \"y\""}`)
	for _, m := range []*message{
		{T: msgCall, RunID: 5, ID: 3, Target: &bindings.Target{Kind: bindings.KindTool, ID: "demo:list_projects", Namespace: "demo", Function: "listProjects"}, Args: args},
		{T: msgCall, RunID: 1, ID: 99, Target: &bindings.Target{Kind: bindings.KindMember, Namespace: "gh", Function: "search_issues"}, Args: json.RawMessage(`{}`)},
		{T: msgStarted, RunID: 2},
	} {
		data, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := decodeCallFrame(data); !ok {
			t.Errorf("%s: not on the quick path", data)
		}
		sameAsJSON(t, data)
	}
}

// FuzzCallFrameDecodesAsJSON: on any input, decodeCallFrame either gives
// up or decodes exactly what json.Unmarshal does.
func FuzzCallFrameDecodesAsJSON(f *testing.F) {
	for _, s := range callFrameSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { sameAsJSON(t, data) })
}

func sameAsJSON(t *testing.T, data []byte) {
	t.Helper()
	got, ok := decodeCallFrame(data)
	if !ok {
		return
	}
	want := new(message)
	if err := json.Unmarshal(data, want); err != nil {
		t.Fatalf("%q: decoded, but json.Unmarshal refuses it: %v", data, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: decoded %+v (target %+v), json.Unmarshal %+v (target %+v)", data, got, got.Target, want, want.Target)
	}
}
