package upstream

// An upstream tool that runs only as a task (its definition's
// execution.taskSupport "required"), on a 2025-11-25 connection to a
// server that takes tasks for tools/call (capabilities.tasks.requests.
// tools.call, the tasks mcp-go serves): it refuses a call without one, so
// the gateway makes the call as a task, polls tasks/get until it ends and
// reads its result with tasks/result. (On 2026-07-28 tasks are the
// extension's, SEP-2663, whose tasks/get inlines the result; an upstream
// that serves them is not passed through yet: docs/serve.md.) To the gateway's pipeline it is one call: what
// the upstream asks of its client meanwhile (elicitation, sampling) is
// relayed as during any call (a gateway task's client is asked through
// its input_required), and a call that ends early (cancelled, timed out)
// cancels the upstream's task.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// Bounds of the polling interval the upstream suggests.
const (
	minTaskPoll     = 50 * time.Millisecond
	maxTaskPoll     = 5 * time.Second
	defaultTaskPoll = time.Second
	// upstreamTaskTTL is the TTL asked of the upstream's task: long enough
	// to read its result after any call timeout the gateway allows.
	upstreamTaskTTL = time.Hour
)

// runsOnlyAsTask reports whether a tool definition says the tool runs only
// as a task.
func runsOnlyAsTask(def json.RawMessage) bool {
	var d struct {
		Execution struct {
			TaskSupport string `json:"taskSupport"`
		} `json:"execution"`
	}
	return json.Unmarshal(def, &d) == nil && mcp.TaskSupport(d.Execution.TaskSupport) == mcp.TaskSupportRequired
}

// takesToolTasks reports whether the server declared that tools/call may
// be made as a task.
func (c *Conn) takesToolTasks() bool {
	t := c.caps.Tasks
	return t != nil && t.Requests != nil && t.Requests.Tools != nil && t.Requests.Tools.Call != nil
}

// taskCallParams is tools/call with the task asked for.
type taskCallParams struct {
	callParams
	Task mcp.TaskParams `json:"task"`
}

type upstreamTask struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage"`
	PollInterval  *int64 `json:"pollInterval"`
}

func (t upstreamTask) ended() bool { return mcp.TaskStatus(t.Status).IsTerminal() }

// callAsTask makes the call as the upstream's task and waits for its end.
func (c *Conn) callAsTask(ctx context.Context, p callParams, header http.Header, stage bool) (json.RawMessage, *Staged, error) {
	ttl := upstreamTaskTTL.Milliseconds()
	raw, err := c.request(ctx, "tools/call", taskCallParams{p, mcp.TaskParams{TTL: &ttl}}, header)
	if err != nil {
		return nil, nil, err
	}
	var created struct {
		Task *upstreamTask `json:"task"`
	}
	if json.Unmarshal(raw, &created) != nil || created.Task == nil || created.Task.TaskID == "" {
		return raw, nil, nil // answered without a task: that is the result
	}
	task, id := *created.Task, created.Task.TaskID
	defer c.cancelTaskIfCallEnded(ctx, c.taskParams(id))
	for !task.ended() {
		wait := defaultTaskPoll
		if task.PollInterval != nil {
			wait = min(max(time.Duration(*task.PollInterval)*time.Millisecond, minTaskPoll), maxTaskPoll)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, nil, ctx.Err()
		case <-t.C:
		}
		raw, err := c.request(ctx, "tasks/get", c.taskParams(task.TaskID), nil)
		if err != nil {
			return nil, nil, err
		}
		var got upstreamTask
		if err := json.Unmarshal(raw, &got); err != nil || got.Status == "" {
			return nil, nil, &RPCError{Code: mcp.INTERNAL_ERROR, Message: fmt.Sprintf("the server's tasks/get answer for its task %s is not a task: %s", task.TaskID, truncated(raw))}
		}
		got.TaskID = task.TaskID
		task = got
	}
	if task.Status == string(mcp.TaskStatusCancelled) {
		return nil, nil, &RPCError{Code: mcp.INTERNAL_ERROR, Message: fmt.Sprintf("the server cancelled the task it ran the call as (%s)", task.StatusMessage)}
	}
	raw, staged, err := c.roundTrip(ctx, "tasks/result", c.taskParams(task.TaskID), nil, stage)
	return raw, staged, err
}

// taskParams are the params of a tasks/* request about the task id.
func (c *Conn) taskParams(id string) map[string]any { return map[string]any{"taskId": id} }

// cancelTaskIfCallEnded sends tasks/cancel (params name the task) when the
// call ended before its task did (cancelled, timed out), beside the call's
// return. (Not context.AfterFunc: a request that sees the end first may
// return, and stop the func, before the context reaches it.)
func (c *Conn) cancelTaskIfCallEnded(ctx context.Context, params map[string]any) {
	if ctx.Err() == nil {
		return
	}
	go func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_, _ = c.request(cctx, "tasks/cancel", params, nil)
	}()
}

// truncated is an answer as an error quotes it.
func truncated(raw json.RawMessage) string {
	const most = 200
	if len(raw) <= most {
		return string(raw)
	}
	return string(raw[:most]) + "…"
}

// tasksExtension is the 2026-07-28 tasks extension (SEP-2663).
const tasksExtension = "io.modelcontextprotocol/tasks"

// servesTasksExtension reports whether a 2026-07-28 server advertises the
// tasks extension.
func (c *Conn) servesTasksExtension() bool {
	_, ok := c.caps.Extensions[tasksExtension]
	return c.modern && ok
}

// declaringTasks is a request's _meta with the tasks extension added to
// the client capabilities it declares.
func declaringTasks(meta map[string]any) map[string]any {
	var caps map[string]any
	switch v := meta[mcp.MetaKeyClientCapabilities].(type) {
	case json.RawMessage:
		_ = json.Unmarshal(v, &caps)
	case map[string]any:
		caps = v
	}
	if caps == nil {
		caps = map[string]any{}
	}
	ext, _ := caps["extensions"].(map[string]any)
	if ext == nil {
		ext = map[string]any{}
	}
	ext[tasksExtension] = map[string]any{}
	caps["extensions"] = ext
	out := make(map[string]any, len(meta)+1)
	for k, v := range meta {
		out[k] = v
	}
	out[mcp.MetaKeyClientCapabilities] = caps
	return out
}

// extensionTask reads the task a tools/call answered with (resultType
// "task"), or "" for any other answer.
func extensionTask(raw json.RawMessage) (id string, poll *int64) {
	var r struct {
		ResultType     string `json:"resultType"`
		TaskID         string `json:"taskId"`
		PollIntervalMs *int64 `json:"pollIntervalMs"`
	}
	if json.Unmarshal(raw, &r) != nil || r.ResultType != "task" {
		return "", nil
	}
	return r.TaskID, r.PollIntervalMs
}

// awaitExtensionTask polls a 2026-07-28 server's task (tasks/get) until it
// ends: its input requests go to Host.ClientRequest as a call's do, and
// their answers back with tasks/update; its result (inlined once
// completed) is the call's; a call that ends first sends tasks/cancel.
func (c *Conn) awaitExtensionTask(ctx context.Context, id string, poll *int64, meta map[string]any) (json.RawMessage, error) {
	params := func(extra map[string]any) map[string]any {
		p := map[string]any{"taskId": id, "_meta": meta}
		for k, v := range extra {
			p[k] = v
		}
		return p
	}
	defer c.cancelTaskIfCallEnded(ctx, params(nil))
	answered := map[string]bool{}
	for {
		wait := defaultTaskPoll
		if poll != nil {
			wait = min(max(time.Duration(*poll)*time.Millisecond, minTaskPoll), maxTaskPoll)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
		raw, err := c.request(ctx, "tasks/get", params(nil), nil)
		if err != nil {
			return nil, err
		}
		var got struct {
			Status         string                     `json:"status"`
			StatusMessage  string                     `json:"statusMessage"`
			PollIntervalMs *int64                     `json:"pollIntervalMs"`
			InputRequests  map[string]json.RawMessage `json:"inputRequests"`
			Result         json.RawMessage            `json:"result"`
			Error          *RPCError                  `json:"error"`
		}
		if err := json.Unmarshal(raw, &got); err != nil || got.Status == "" {
			return nil, &RPCError{Code: mcp.INTERNAL_ERROR, Message: fmt.Sprintf("the server's tasks/get answer for its task %s is not a task: %s", id, truncated(raw))}
		}
		if got.PollIntervalMs != nil {
			poll = got.PollIntervalMs
		}
		switch mcp.TaskStatus(got.Status) {
		case mcp.TaskStatusCompleted:
			if len(got.Result) == 0 {
				return nil, &RPCError{Code: mcp.INTERNAL_ERROR, Message: fmt.Sprintf("the server's task %s completed without a result", id)}
			}
			return got.Result, nil
		case mcp.TaskStatusFailed:
			if got.Error != nil {
				return nil, got.Error
			}
			return nil, &RPCError{Code: mcp.INTERNAL_ERROR, Message: fmt.Sprintf("the server's task %s failed: %s", id, got.StatusMessage)}
		case mcp.TaskStatusCancelled:
			return nil, &RPCError{Code: mcp.INTERNAL_ERROR, Message: fmt.Sprintf("the server cancelled the task it ran the call as (%s)", got.StatusMessage)}
		case mcp.TaskStatusInputRequired:
			answers := map[string]json.RawMessage{}
			for key, rawReq := range got.InputRequests {
				if answered[key] {
					continue
				}
				var r struct {
					Method string          `json:"method"`
					Params json.RawMessage `json:"params"`
				}
				if err := json.Unmarshal(rawReq, &r); err != nil {
					return nil, &RPCError{Code: mcp.INVALID_PARAMS, Message: "malformed input request: " + err.Error()}
				}
				ans, err := c.s.host.ClientRequest(ctx, r.Method, r.Params)
				if err != nil {
					return nil, err
				}
				answers[key], answered[key] = ans, true
			}
			if len(answers) > 0 {
				if _, err := c.request(ctx, "tasks/update", params(map[string]any{"inputResponses": answers}), nil); err != nil {
					return nil, err
				}
			}
		}
	}
}
