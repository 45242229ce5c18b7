package runtime

import (
	"encoding/json"
	"testing"
)

func TestDecodeResult(t *testing.T) {
	t.Parallel()
	text := func(s string) json.RawMessage {
		b, _ := json.Marshal(map[string]string{"type": "text", "text": s})
		return b
	}
	image := json.RawMessage(`{"type":"image","data":"AAA=","mimeType":"image/png"}`)
	cases := []struct {
		name       string
		content    []json.RawMessage
		structured string
		want       string
	}{
		{"structured wins", []json.RawMessage{text(`{"a":1}`)}, `{"b":2}`, `{"b":2}`},
		{"JSON text is parsed", []json.RawMessage{text(` {"items":[1,2]} `)}, "", `{"items":[1,2]}`},
		{"number text", []json.RawMessage{text("42")}, "", `42`},
		{"plain text stays text", []json.RawMessage{text("hello world")}, "", `"hello world"`},
		{"several text blocks join", []json.RawMessage{text("line 1"), text("line 2")}, "", `"line 1\nline 2"`},
		{"several blocks that form JSON", []json.RawMessage{text(`[1,`), text(`2]`)}, "", `[1,\n2]`},
		{"mixed content is the blocks", []json.RawMessage{text("caption"), image}, "", `[{"type":"text","text":"caption"},{"type":"image","data":"AAA=","mimeType":"image/png"}]`},
		{"nothing is null", nil, "", `null`},
		{"null structured is absent", []json.RawMessage{text("t")}, "null", `"t"`},
		{"empty text", []json.RawMessage{text("")}, "", `""`},
	}
	for _, c := range cases {
		got, err := DecodeResult(c.content, json.RawMessage(c.structured))
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		var g, w any
		if json.Unmarshal(got, &g) != nil {
			t.Errorf("%s: invalid JSON %s", c.name, got)
			continue
		}
		if c.name == "several blocks that form JSON" {
			// "[1,\n2]" is JSON once joined: it parses, as the contract says.
			if string(got) != "[1,\n2]" {
				t.Errorf("%s: got %s", c.name, got)
			}
			continue
		}
		_ = json.Unmarshal([]byte(c.want), &w)
		gb, _ := json.Marshal(g)
		wb, _ := json.Marshal(w)
		if string(gb) != string(wb) {
			t.Errorf("%s: got %s, want %s", c.name, got, c.want)
		}
	}
	if _, err := DecodeResult([]json.RawMessage{json.RawMessage(`"not an object"`)}, nil); err == nil {
		t.Error("a malformed block must be an error")
	}
}
