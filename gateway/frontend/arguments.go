package frontend

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/sandboxrt/sandbox/gateway/internal/jsonscan"
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
// Everything but the arguments stays as it was, in the same order, keys
// as written, so that mcp-go reads the rest of the request as it would
// have read the body. The body is walked without decoding: the token
// decoder this replaced cost more than the rest of the front end's own
// work on a request (RATIONALE.md, issue 29's fourth pass). checked says
// the body is known to be JSON (parseEnvelope read it); else it is checked
// first (json.Valid).
func splitArguments(body []byte, checked bool) (rest []byte, args json.RawMessage, ok bool) {
	if !checked && !json.Valid(body) {
		return nil, nil, false
	}
	top, ok := objectMembers(body)
	if !ok {
		return nil, nil, false
	}
	p := onlyMember(top, "params")
	if p < 0 {
		return nil, nil, false
	}
	params, ok := objectMembers(top[p].value)
	if !ok {
		return nil, nil, false
	}
	a := onlyMember(params, "arguments")
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

// onlyMember is the index of the member of ms that encoding/json reads as
// field name (it matches keys without regard to case); -1 when none does,
// or more than one does (which of them counts is then mcp-go's to say).
func onlyMember(ms []member, name string) int {
	at := -1
	for i, m := range ms {
		if keyIs(m.written, name) {
			if at >= 0 {
				return -1
			}
			at = i
		}
	}
	return at
}

// numbersFit reports whether every number in the JSON text v fits a
// float64: mcp-go decodes a body's arguments into a map as well, and
// refuses the body when one does not (1e400), so such a body is left whole
// for it to refuse. v is valid JSON; strings are skipped quote to quote.
func numbersFit(v []byte) bool {
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c == '"':
			i = jsonscan.StringEnd(v, i) - 1
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

// member is one member of a JSON object: its key as it is written
// (between the quotes) and its value as written.
type member struct {
	written []byte
	value   json.RawMessage
}

// objectMembers reads the members of the JSON object v (valid JSON), in
// order; false when v is not an object or has more than maxMembers.
func objectMembers(v []byte) ([]member, bool) {
	ms := make([]member, 0, 8)
	within := true
	isObject := jsonscan.Members(v, func(key, value []byte) bool {
		if within = len(ms) < maxMembers; !within {
			return false
		}
		ms = append(ms, member{written: key, value: value})
		return true
	})
	return ms, isObject && within
}

// keyIs reports whether encoding/json reads a key, as written between its
// quotes, as the field name (it matches keys without regard to case).
// Escapes and bytes past ASCII are rare in a request's keys; such a key is
// unquoted by encoding/json itself first.
func keyIs(written []byte, name string) bool {
	for _, c := range written {
		if c == '\\' || c >= 0x80 {
			var key string
			_ = json.Unmarshal(append(append([]byte{'"'}, written...), '"'), &key) // valid: json.Valid passed it
			return strings.EqualFold(key, name)
		}
	}
	return strings.EqualFold(string(written), name)
}

func writeObject(ms []member) []byte {
	n := 2
	for _, m := range ms {
		n += len(m.written) + len(m.value) + 4
	}
	b := make([]byte, 0, n)
	b = append(b, '{')
	for i, m := range ms {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, m.written...)
		b = append(b, '"', ':')
		b = append(b, m.value...)
	}
	return append(b, '}')
}
