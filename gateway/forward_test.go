package gateway

import (
	"encoding/json"
	"testing"
)

// unmarshalCallResult is parseCallResult's reading by json.Unmarshal, as
// it was before splitCallResult.
func unmarshalCallResult(raw []byte) (*CallResult, error) {
	var r struct {
		Content           *[]json.RawMessage `json:"content"`
		StructuredContent json.RawMessage    `json:"structuredContent"`
		IsError           bool               `json:"isError"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, err
	}
	res := &CallResult{IsError: r.IsError, Content: []json.RawMessage{}}
	if r.Content != nil {
		res.Content = *r.Content
	}
	if len(r.StructuredContent) > 0 && string(r.StructuredContent) != "null" {
		res.StructuredContent = r.StructuredContent
	}
	return res, nil
}

// FuzzSplitCallResult: whatever a result holds, splitCallResult reads it
// as json.Unmarshal does, or leaves it to json.Unmarshal.
func FuzzSplitCallResult(f *testing.F) {
	for _, s := range []string{
		`{"content":[{"type":"text","text":"a\"]}"},{"type":"image","data":"x"}],"isError":false}`,
		`{"content":[],"structuredContent":{"a":[1,{"b":"}"}]},"isError":true}`,
		`{"content":null,"structuredContent":null,"isError":null}`,
		` { "content" : [ 1 , "x" , {"_meta":{}} ] , "extra" : {"content":7} } `,
		`{"Content":[{}]}`, `{"isError":"yes"}`, `{"content":{}}`, `{"content":[{}],"content":[]}`,
		`{"\u0063ontent":[{}]}`, `{"isError":1}`, `[]`, `null`, `{}`, `{"content":[`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, ok := splitCallResult(raw, false)
		want, err := unmarshalCallResult(raw)
		if !ok {
			return
		}
		if err != nil {
			t.Fatalf("split what json.Unmarshal refuses (%v): %q", err, raw)
		}
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		if string(g) != string(w) || len(got.Content) != len(want.Content) {
			t.Fatalf("%q:\nsplit     %s\nUnmarshal %s", raw, g, w)
		}
		for i := range got.Content {
			if string(got.Content[i]) != string(want.Content[i]) || cap(got.Content[i]) != len(got.Content[i]) {
				t.Fatalf("%q: block %d: %q (cap %d), want %q", raw, i, got.Content[i], cap(got.Content[i]), want.Content[i])
			}
		}
	})
}

// TestParseCallResultSplitsPlainResults: a plain result is read without
// json.Unmarshal, and a result it cannot read gets json.Unmarshal's error.
func TestParseCallResultSplitsPlainResults(t *testing.T) {
	t.Parallel()
	raw := []byte(`{"content":[{"type":"text","text":"hi"},{"type":"text","text":"x","_meta":{"k":1}}],"structuredContent":{"n":1},"isError":true}`)
	if _, ok := splitCallResult(raw, false); !ok {
		t.Fatal("a plain result was not split")
	}
	res, err := parseCallResult(raw, false)
	if err != nil || len(res.Content) != 2 || string(res.Content[0]) != `{"type":"text","text":"hi"}` || string(res.Content[1]) != `{"text":"x","type":"text"}` ||
		string(res.StructuredContent) != `{"n":1}` || !res.IsError {
		t.Fatalf("%+v %v", res, err)
	}
	_, want := unmarshalCallResult([]byte(`{"isError":"yes"}`))
	if _, err := parseCallResult([]byte(`{"isError":"yes"}`), false); err == nil || want == nil || err.Error() != "result is not a JSON object: "+want.Error() {
		t.Fatalf("error: %v, want json.Unmarshal's %v", err, want)
	}
}
