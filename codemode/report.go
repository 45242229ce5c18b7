package codemode

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"

	"github.com/sandboxrt/sandbox/internal/jsonstream"
	"github.com/sandboxrt/sandbox/runtime"
)

// execute_code's result carries a run's console output (up to the output
// limit, megabytes) twice: in the report's JSON (structuredContent) and in
// the text block that holds that JSON as a string. Built with json.Marshal,
// the logs were copied some nine times on the way (the report's growing
// buffer and its copy, string(body), the text block's growing buffer and its
// copy, each entry's level prefix). reportJSON and textBlockJSON write each
// of the two into one buffer of the exact size, the bytes json.Marshal would
// produce (TestReportJSONIsMarshalsOutput holds them to it).

// ResultJSON is the one envelope of a run's result, as execute_code returns
// it and `sandbox run --json` prints it (docs: README, "The result
// envelope"): {"ok", "value" | "error", "logs": ["[warn] text", ...],
// "logsTruncated"?, "calls": [{"tool", "ms", "ok", "code"?}], "durationMs",
// "bound"? (on failure: what the run could call), "limits"? (when clamped)}.
// Durations are milliseconds; log lines carry their level as a prefix
// except for console.log.
func ResultJSON(res *ExecuteResult) ([]byte, error) { return reportJSON(res) }

// reportJSON is json.Marshal(executeReport(res)), with the logs written
// straight from the run's entries.
func reportJSON(res *ExecuteResult) ([]byte, error) {
	r := reportWithoutLogs(res)
	var errJSON []byte
	if r.Error != nil {
		var err error
		if errJSON, err = json.Marshal(r.Error); err != nil {
			return nil, err
		}
	}
	tail, err := json.Marshal(reportTail{LogsTruncated: r.LogsTruncated, Calls: r.Calls, DurationMs: r.DurationMs, Bound: r.Bound, Limits: r.Limits})
	if err != nil {
		return nil, err
	}
	var value []byte
	if len(r.Value) > 0 {
		// What json.Marshal does to a RawMessage: the runtime's values are
		// compact already (Compact is a check then, and no copy).
		if value, err = compactJSON(r.Value); err != nil {
			return nil, err
		}
	}

	size := len(`{"ok":`) + len(strconv.FormatBool(r.OK)) + len(tail) // tail's { is the , before it
	if value != nil {
		size += len(`,"value":`) + len(value)
	}
	if errJSON != nil {
		size += len(`,"error":`) + len(errJSON)
	}
	if len(res.Logs) > 0 {
		size += len(`,"logs":[]`) + len(res.Logs) - 1
		for _, l := range res.Logs {
			size += len(levelPrefix(l.Level)) + jsonStringLen(l.Message)
		}
	}
	b := make([]byte, 0, size)
	b = append(b, `{"ok":`...)
	b = strconv.AppendBool(b, r.OK)
	if value != nil {
		b = append(b, `,"value":`...)
		b = append(b, value...)
	}
	if errJSON != nil {
		b = append(b, `,"error":`...)
		b = append(b, errJSON...)
	}
	if len(res.Logs) > 0 {
		b = append(b, `,"logs":[`...)
		for i, l := range res.Logs {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, levelPrefix(l.Level), l.Message)
		}
		b = append(b, ']')
	}
	b = append(b, ',')
	b = append(b, tail[1:]...) // its members, and the closing brace
	return b, nil
}

// reportTail is the report's fields after the logs, in order.
type reportTail struct {
	LogsTruncated bool           `json:"logsTruncated,omitempty"`
	Calls         []callReport   `json:"calls,omitempty"`
	DurationMs    float64        `json:"durationMs"`
	Bound         []string       `json:"bound,omitempty"`
	Limits        *AppliedLimits `json:"limits,omitempty"`
}

// levelPrefix marks the console entries that are not plain output.
func levelPrefix(l runtime.LogLevel) string {
	if l == runtime.LevelLog || l == runtime.LevelInfo {
		return ""
	}
	return "[" + string(l) + "] "
}

// compactJSON is what json.Marshal makes of a RawMessage: compacted, with
// <, >, &, U+2028 and U+2029 escaped. The runtime's values are mostly that
// already: then they are used as they are, without a copy.
func compactJSON(v json.RawMessage) ([]byte, error) {
	if json.Valid(v) && isCompact(v) && !bytes.ContainsAny(v, "<>&\u2028\u2029") {
		return v, nil
	}
	return json.Marshal(v)
}

// isCompact reports whether JSON text has no whitespace outside strings.
func isCompact(v []byte) bool {
	inString, escaped := false, false
	for _, c := range v {
		switch {
		case escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case !inString && (c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			return false
		}
	}
	return true
}

// textBlockJSON is the MCP text content block holding text, as
// json.Marshal(map[string]string{"type": "text", "text": text}) writes it.
func textBlockJSON[T []byte | string](text T) json.RawMessage {
	b := make([]byte, 0, len(`{"text":,"type":"text"}`)+jsonStringLen(text))
	b = append(b, `{"text":`...)
	b = appendJSONString(b, "", text)
	return append(b, `,"type":"text"}`...)
}

// appendJSONString appends prefix+s as a JSON string, escaped exactly as
// encoding/json escapes strings (jsonstream.AppendStringBody). The prefix
// is plain ASCII.
func appendJSONString[T []byte | string](dst []byte, prefix string, s T) []byte {
	dst = append(append(dst, '"'), prefix...)
	return append(jsonstream.AppendStringBody(dst, s), '"')
}

// jsonStringLen is the length of appendJSONString's output for s, without
// a prefix.
func jsonStringLen[T []byte | string](s T) int { return 2 + jsonstream.StringBodyLen(s) }

// report is execute_code's result as the agent reads it: compact, durations
// in milliseconds, nothing the agent cannot act on.
type report struct {
	OK            bool            `json:"ok"`
	Value         json.RawMessage `json:"value,omitempty"`
	Error         *runtime.Error  `json:"error,omitempty"`
	Logs          []string        `json:"logs,omitempty"`
	LogsTruncated bool            `json:"logsTruncated,omitempty"`
	Calls         []callReport    `json:"calls,omitempty"`
	DurationMs    float64         `json:"durationMs"`
	Bound         []string        `json:"bound,omitempty"`
	// Limits are shown when the request asked for more than the ceiling.
	Limits *AppliedLimits `json:"limits,omitempty"`
}

type callReport struct {
	Tool       string  `json:"tool"`
	DurationMs float64 `json:"ms"`
	OK         bool    `json:"ok"`
	Code       string  `json:"code,omitempty"`
}

// executeReport is the report of a run. handleExecute writes its JSON with
// reportJSON, which does not build Logs (see report.go).
func executeReport(res *ExecuteResult) report {
	r := reportWithoutLogs(res)
	for _, l := range res.Logs {
		r.Logs = append(r.Logs, levelPrefix(l.Level)+l.Message)
	}
	return r
}

func reportWithoutLogs(res *ExecuteResult) report {
	r := report{OK: res.OK, Value: res.Value, Error: res.Error, LogsTruncated: res.LogsTruncated,
		DurationMs: ms(res.Duration), Bound: res.Bound}
	for _, c := range res.Calls {
		r.Calls = append(r.Calls, callReport{Tool: c.Tool, DurationMs: ms(c.Duration), OK: c.OK, Code: c.Code})
	}
	if len(res.Limits.Clamped) > 0 {
		r.Limits = &res.Limits
	}
	if !res.OK {
		r.Bound = res.Bound // what could have been called helps fix NOT_BOUND and typos
	} else {
		r.Bound = nil
	}
	return r
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
