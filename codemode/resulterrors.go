package codemode

import (
	"encoding/json"
	"fmt"

	"github.com/sandboxrt/sandbox/gateway"
	"github.com/sandboxrt/sandbox/runtime"
)

// maxToolResult is the largest result one tool call can bring a snippet,
// whole or as a handle: the gateway's cap on an upstream's answer (for a
// call that may spill, its ceiling on spilled results), or what a caller's
// held results may take, whichever is smaller. gatewayCap is the cap a
// gateway error reported (its data's limitBytes), 0 when there was none: a
// result that passed the gateway is under its cap, so then only the held
// results' bound can be the smaller.
func (e *Engine) maxToolResult(gatewayCap int64) int64 {
	perPrincipal := e.resultLimits().PerPrincipalBytes
	if gatewayCap > 0 {
		return min(gatewayCap, perPrincipal)
	}
	return perPrincipal
}

// gatewayCap reads the cap of the gateway's RESULT_TOO_LARGE.
func gatewayCap(ge *gateway.Error) int64 {
	var d struct {
		LimitBytes int64 `json:"limitBytes"`
	}
	_ = json.Unmarshal(ge.Data, &d)
	return d.LimitBytes
}

// resultTooLarge is the RESULT_TOO_LARGE a snippet gets for a tool result
// it cannot receive at all, not even as a handle; size is 0 when only its
// lower bound is known (the gateway stopped reading at its cap). It is the
// one wording of that error in code mode: it gives the real maximum (not a
// cap a larger one hides) and says how results below it arrive.
func resultTooLarge(tool string, size, max int64) *runtime.ToolError {
	is := "is larger than " + byteSize(max)
	detail := map[string]int64{"maxBytes": max}
	if size > 0 {
		is = fmt.Sprintf("is %s, more than %s", byteSize(size), byteSize(max))
		detail["bytes"] = size
	}
	data, _ := json.Marshal(detail)
	return &runtime.ToolError{Code: string(gateway.CodeResultTooLarge), Data: data, Message: fmt.Sprintf(
		"the result of %s %s, the most one tool call can return here; results up to that size reach the snippet whole or, "+
			"past what one run receives, as a handle to read in parts (sandbox.results.read, sandbox.results.json). "+
			"Ask for less (a page, a range, a filter, fewer fields) and call again", tool, is)}
}

// byteSize writes a size for a message: 38.2 MB as "38.2 MiB (40054883 bytes)".
func byteSize(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB (%d bytes)", float64(n)/(1<<20), n)
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB (%d bytes)", float64(n)/(1<<10), n)
	}
	return fmt.Sprintf("%d bytes", n)
}
