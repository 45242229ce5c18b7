package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// A small positioned JSON tree, so that configuration errors can say
// "config.json:12:7: ..." for every key and value, which encoding/json's
// DisallowUnknownFields cannot.

type jsonKind int

const (
	jsonNull jsonKind = iota
	jsonBool
	jsonNumber
	jsonString
	jsonArray
	jsonObject
)

func (k jsonKind) String() string {
	return [...]string{"null", "a boolean", "a number", "a string", "an array", "an object"}[k]
}

type jsonNode struct {
	kind   jsonKind
	offset int64 // byte offset of the value's first byte
	str    string
	num    json.Number
	b      bool
	arr    []*jsonNode
	keys   []jsonKey // object members in document order
}

type jsonKey struct {
	name   string
	offset int64 // byte offset of the key
	value  *jsonNode
}

// maxJSONDepth bounds nesting; configuration files are shallow.
const maxJSONDepth = 64

// parsePositioned parses one JSON document. Syntax errors carry a byte offset.
func parsePositioned(data []byte) (*jsonNode, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	n, err := parseValue(dec, data, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, &posError{offset: dec.InputOffset(), msg: "unexpected data after the top-level JSON value"}
	}
	return n, nil
}

// posError is an error at a byte offset; formatted with line:col by the caller.
type posError struct {
	offset int64
	msg    string
}

func (e *posError) Error() string { return e.msg }

// valueStart returns the offset of the next non-space byte at or after off.
func valueStart(data []byte, off int64) int64 {
	for off < int64(len(data)) {
		switch data[off] {
		case ' ', '\t', '\r', '\n', ':', ',':
			off++
		default:
			return off
		}
	}
	return off
}

func parseValue(dec *json.Decoder, data []byte, depth int) (*jsonNode, error) {
	if depth > maxJSONDepth {
		return nil, &posError{offset: dec.InputOffset(), msg: "JSON nested too deeply"}
	}
	start := valueStart(data, dec.InputOffset())
	tok, err := dec.Token()
	if err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, &posError{offset: se.Offset, msg: "invalid JSON: " + se.Error()}
		}
		if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, &posError{offset: int64(len(data)), msg: "unexpected end of JSON"}
		}
		return nil, &posError{offset: dec.InputOffset(), msg: "invalid JSON: " + err.Error()}
	}
	n := &jsonNode{offset: start}
	switch t := tok.(type) {
	case nil:
		n.kind = jsonNull
	case bool:
		n.kind, n.b = jsonBool, t
	case json.Number:
		n.kind, n.num = jsonNumber, t
	case string:
		n.kind, n.str = jsonString, t
	case json.Delim:
		switch t {
		case '[':
			n.kind = jsonArray
			for dec.More() {
				v, err := parseValue(dec, data, depth+1)
				if err != nil {
					return nil, err
				}
				n.arr = append(n.arr, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, &posError{offset: dec.InputOffset(), msg: "invalid JSON: " + err.Error()}
			}
		case '{':
			n.kind = jsonObject
			seen := map[string]bool{}
			for dec.More() {
				keyOff := valueStart(data, dec.InputOffset())
				kt, err := dec.Token()
				if err != nil {
					return nil, &posError{offset: dec.InputOffset(), msg: "invalid JSON: " + err.Error()}
				}
				key, _ := kt.(string)
				if seen[key] {
					return nil, &posError{offset: keyOff, msg: fmt.Sprintf("duplicate key %q", key)}
				}
				seen[key] = true
				v, err := parseValue(dec, data, depth+1)
				if err != nil {
					return nil, err
				}
				n.keys = append(n.keys, jsonKey{name: key, offset: keyOff, value: v})
			}
			if _, err := dec.Token(); err != nil {
				return nil, &posError{offset: dec.InputOffset(), msg: "invalid JSON: " + err.Error()}
			}
		default:
			return nil, &posError{offset: start, msg: fmt.Sprintf("unexpected %q", t)}
		}
	}
	return n, nil
}

// lineCol converts a byte offset into a 1-based line and column.
func lineCol(data []byte, off int64) (line, col int) {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	line = 1 + bytes.Count(data[:off], []byte{'\n'})
	lastNL := bytes.LastIndexByte(data[:off], '\n')
	col = int(off) - lastNL
	return line, col
}
