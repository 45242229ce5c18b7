package vectorindex

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

// Tool is one tool of the catalog, as the index sees it. The gateway's
// catalog converts to it; tests and the CLI read it from JSON (the corpus
// format: server, name, title, description, inputSchema).
type Tool struct {
	// ID is the tool's id everywhere in sandbox, "server:tool". When empty
	// it is made from Server and Name.
	ID          string          `json:"id,omitempty"`
	Server      string          `json:"server,omitempty"`
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"inputSchema,omitempty"`
}

// Limits on what one tool contributes to the index. Upstream servers are
// untrusted: a multi-megabyte description or a schema with ten thousand
// properties must not blow up memory or search time, so the excess is
// ignored (not an error: the tool is still found by what is left).
const (
	maxIDLen          = 256
	maxDescriptionLen = 8 << 10
	maxTitleLen       = 512
	maxSchemaLen      = 1 << 20
	maxParams         = 100
	maxParamDescLen   = 512
	maxDocTextLen     = 8000 // what remote embedders receive, ~2k tokens
)

// normalized fills ID from Server and Name and checks what cannot be
// repaired.
func (t Tool) normalized() (Tool, error) {
	if t.ID == "" && t.Server != "" && t.Name != "" {
		t.ID = t.Server + ":" + t.Name
	}
	if strings.TrimSpace(t.ID) == "" {
		return t, fmt.Errorf("tool %q has no id: set ID (\"server:tool\") or both Server and Name", t.Name)
	}
	if len(t.ID) > maxIDLen {
		return t, fmt.Errorf("tool id %.40q... is %d bytes; ids are limited to %d", t.ID, len(t.ID), maxIDLen)
	}
	if !utf8.ValidString(t.ID) {
		return t, fmt.Errorf("tool id %q is not valid UTF-8", t.ID)
	}
	// Text that is not UTF-8 would not survive a round trip through the
	// store unchanged (and then look changed at every restart).
	t.Server = strings.ToValidUTF8(t.Server, "\uFFFD")
	t.Name = strings.ToValidUTF8(t.Name, "\uFFFD")
	t.Title = strings.ToValidUTF8(t.Title, "\uFFFD")
	t.Description = strings.ToValidUTF8(t.Description, "\uFFFD")
	// Only this much of each is ever read (see fields), so only this much
	// is hashed and stored.
	t.Description = truncate(t.Description, maxDescriptionLen)
	t.Title = truncate(t.Title, maxTitleLen)
	if len(t.InputSchema) > maxSchemaLen {
		t.InputSchema = nil
	}
	if t.Server == "" || t.Name == "" {
		if i := strings.IndexByte(t.ID, ':'); i > 0 {
			if t.Server == "" {
				t.Server = t.ID[:i]
			}
			if t.Name == "" {
				t.Name = t.ID[i+1:]
			}
		} else if t.Name == "" {
			t.Name = t.ID
		}
	}
	return t, nil
}

// same reports whether two normalized tools are the same definition, byte
// for byte (then their hashes are equal).
func (t Tool) same(u Tool) bool {
	return t.ID == u.ID && t.Server == u.Server && t.Name == u.Name && t.Title == u.Title &&
		t.Description == u.Description && bytes.Equal(t.InputSchema, u.InputSchema)
}

// hash identifies a tool definition: the persisted embedding of a tool is
// reused after a restart only while its hash is unchanged. The schema is
// compacted first so that whitespace does not count as a change.
func (t Tool) hash() string {
	h := sha256.New()
	for _, s := range []string{t.ID, t.Server, t.Name, t.Title, t.Description} {
		fmt.Fprintf(h, "%d:%s\n", len(s), s)
	}
	var buf bytes.Buffer
	if len(t.InputSchema) > 0 && json.Compact(&buf, t.InputSchema) == nil {
		h.Write(buf.Bytes())
	} else {
		h.Write(t.InputSchema)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// field is a piece of a tool's text with how much its words count: a word
// in the tool's name says more about what the tool does than one in a
// parameter's description.
type field struct {
	text   string
	weight float32
}

const (
	wName      = 3
	wServer    = 1.5
	wTitle     = 2
	wDesc      = 1
	wParamName = 0.5
	wParamDesc = 0.3
)

// fields splits a tool into weighted text: id (server, name), title,
// description, and the names and descriptions of its top-level parameters
// read from the raw input schema.
func (t Tool) fields() []field {
	fs := []field{
		{t.Server, wServer},
		{t.Name, wName},
		{truncate(t.Title, maxTitleLen), wTitle},
		{truncate(t.Description, maxDescriptionLen), wDesc},
	}
	for _, p := range schemaParams(t.InputSchema) {
		fs = append(fs, field{p.name, wParamName})
		if p.desc != "" {
			fs = append(fs, field{truncate(p.desc, maxParamDescLen), wParamDesc})
		}
	}
	return fs
}

// docText is the tool as one text, for embedding services.
func (t Tool) docText() string {
	var b strings.Builder
	b.WriteString(t.ID)
	b.WriteString("\n")
	b.WriteString(strings.Join(splitAll(t.Name), " "))
	if t.Title != "" {
		b.WriteString("\n" + truncate(t.Title, maxTitleLen))
	}
	if t.Description != "" {
		b.WriteString("\n" + truncate(t.Description, maxDescriptionLen))
	}
	if ps := schemaParams(t.InputSchema); len(ps) > 0 {
		b.WriteString("\nParameters:")
		for _, p := range ps {
			b.WriteString("\n- " + p.name)
			if p.desc != "" {
				b.WriteString(": " + truncate(p.desc, maxParamDescLen))
			}
		}
	}
	return truncate(b.String(), maxDocTextLen)
}

func splitAll(s string) []string {
	var ws []string
	splitWords(s, func(w string) { ws = append(ws, w) })
	return ws
}

type param struct{ name, desc string }

// schemaParams reads the top-level properties of a JSON Schema, in name
// order. A schema that is not an object with properties (or not JSON at
// all) has none: the tool is still indexed by its name and description.
func schemaParams(raw json.RawMessage) []param {
	if len(raw) == 0 || len(raw) > maxSchemaLen {
		return nil
	}
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(raw, &s) != nil {
		return nil
	}
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) > maxParams {
		names = names[:maxParams]
	}
	out := make([]param, 0, len(names))
	for _, n := range names {
		var p struct {
			Description string `json:"description"`
			Title       string `json:"title"`
		}
		_ = json.Unmarshal(s.Properties[n], &p) // a non-object property still has a name
		d := p.Description
		if d == "" {
			d = p.Title
		}
		out = append(out, param{name: truncate(n, 128), desc: d})
	}
	return out
}

// truncate cuts s to at most n bytes on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
