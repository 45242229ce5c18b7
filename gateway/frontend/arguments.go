package frontend

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// A built-in tool's handler takes its arguments as raw JSON and decodes
// them itself (code mode strict-decodes them, so that a misspelt argument
// is an error the agent sees). mcp-go v1.2.1, handed a tools/call body,
// decodes the arguments with the rest of it seven times (eleven for
// protocol 2026-07-28: its transport's checks, the protocol era, the
// message, the request, header validation), the last into a map nobody
// reads; for a 10 KiB snippet that was 80% of the front end's CPU per call
// (RATIONALE.md, "mcp-go, and what the front end adds"). So
// the HTTP front end takes a built-in tool's arguments out of the body
// before mcp-go reads it (splitArguments), and handBackArguments puts them
// into mcp-go's decoded request, the same bytes mcp-go would have put
// there, just before the handler runs.

// handedArguments are the arguments of the tools/call of tool, taken out
// of its body; they ride in the request's context.
type handedArguments struct {
	tool string
	args json.RawMessage
}

type handedArgumentsKey struct{}

// handBackArguments gives a call whose arguments the front end took out of
// its body those arguments, as mcp-go would have decoded them.
func handBackArguments(next server.ToolHandlerFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		h, ok := ctx.Value(handedArgumentsKey{}).(handedArguments)
		if ok && h.tool == req.Params.Name && req.Params.RawArguments == nil && req.Params.Arguments == nil {
			req.Params.RawArguments = h.args
		}
		return next(ctx, req)
	}
}

// splitArguments returns a tools/call body without its arguments, and the
// arguments as they are written in it: what mcp-go would keep of them
// (mcp.CallToolParams.RawArguments). ok is false for a body it leaves
// whole: one without arguments, one whose params is not an object, and one
// whose params or arguments could be read more than one way (two keys that
// encoding/json, which matches keys without regard to case, takes for the
// same field).
//
// Everything but the arguments stays as it was, in the same order, so that
// mcp-go reads the rest of the request as it would have read the body. The
// body is read once, by one decoder, which holds no more than one member's
// value at a time.
func splitArguments(body []byte) (rest []byte, args json.RawMessage, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	if !delim(dec, '{') {
		return nil, nil, false
	}
	var top, params []member
	p := -1
	for dec.More() {
		if len(top) == maxMembers {
			return nil, nil, false
		}
		key, ok := keyToken(dec)
		if !ok {
			return nil, nil, false
		}
		if strings.EqualFold(key, "params") { // how encoding/json matches keys
			if p >= 0 || !delim(dec, '{') {
				return nil, nil, false
			}
			if params, ok = members(dec, body); !ok {
				return nil, nil, false
			}
			p = len(top)
			top = append(top, member{key: key}) // its value is written below
			continue
		}
		v, ok := value(dec, body)
		if !ok {
			return nil, nil, false
		}
		top = append(top, member{key, v})
	}
	if !delim(dec, '}') || p < 0 {
		return nil, nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, nil, false // something after the object
	}
	a := -1
	for i, m := range params {
		if strings.EqualFold(m.key, "arguments") {
			if a >= 0 {
				return nil, nil, false
			}
			a = i
		}
	}
	if a < 0 {
		return nil, nil, false
	}
	args = params[a].value
	if !numbersFit(args) {
		return nil, nil, false
	}
	top[p].value = writeObject(slices.Delete(params, a, a+1))
	return writeObject(top), args, true
}

// numbersFit reports whether every number in the JSON text v fits a
// float64: mcp-go decodes a body's arguments into a map as well, and
// refuses the body when one does not (1e400), so such a body is left whole
// for it to refuse. v is valid JSON; strings are skipped quote to quote.
func numbersFit(v []byte) bool {
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c == '"':
			for i++; i < len(v); i++ {
				k := bytes.IndexAny(v[i:], `"\\`)
				if k < 0 {
					return true // not JSON: the decoder has refused it already
				}
				if i += k; v[i] == '"' {
					break
				}
				i++ // the escaped byte
			}
		case c == '-' || c >= '0' && c <= '9':
			j := i
			for j < len(v) && bytes.IndexByte([]byte("+-.0123456789eE"), v[j]) >= 0 {
				j++
			}
			if _, err := strconv.ParseFloat(string(v[i:j]), 64); err != nil {
				return false
			}
			i = j - 1
		}
	}
	return true
}

// maxMembers bounds the members splitArguments reads at each of the two
// levels it reads (the message, its params): a tools/call has a handful,
// and a body of thousands of tiny ones, which mcp-go would skip without
// keeping anything, must not make the front end keep a member for each.
// Such a body is left whole.
const maxMembers = 32

// member is one member of a JSON object, its value as it is written.
type member struct {
	key   string
	value json.RawMessage
}

// members reads the members of the object whose "{" dec has just read,
// through its "}", in order; their values are slices of raw, dec's input.
func members(dec *json.Decoder, raw []byte) ([]member, bool) {
	var ms []member
	for dec.More() {
		if len(ms) == maxMembers {
			return nil, false
		}
		key, ok := keyToken(dec)
		if !ok {
			return nil, false
		}
		v, ok := value(dec, raw)
		if !ok {
			return nil, false
		}
		ms = append(ms, member{key, v})
	}
	return ms, delim(dec, '}')
}

func keyToken(dec *json.Decoder) (string, bool) {
	t, err := dec.Token()
	key, ok := t.(string)
	return key, err == nil && ok
}

func delim(dec *json.Decoder, d json.Delim) bool {
	t, err := dec.Token()
	return err == nil && t == d
}

// value reads the value of the member whose key dec has just read, and
// returns it as it is written in raw, dec's input.
func value(dec *json.Decoder, raw []byte) (json.RawMessage, bool) {
	from := dec.InputOffset() // just after the key
	if dec.Decode(&unread{}) != nil {
		return nil, false
	}
	// Between the key and the value: blanks and the colon.
	return bytes.TrimLeft(raw[from:dec.InputOffset()], " \t\r\n:"), true
}

// unread takes a JSON value (which the decoder has checked) without
// copying it.
type unread struct{}

func (*unread) UnmarshalJSON([]byte) error { return nil }

func writeObject(ms []member) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range ms {
		if i > 0 {
			b.WriteByte(',')
		}
		key, _ := json.Marshal(m.key)
		b.Write(key)
		b.WriteByte(':')
		b.Write(m.value)
	}
	b.WriteByte('}')
	return b.Bytes()
}
