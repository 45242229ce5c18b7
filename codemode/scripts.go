package codemode

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/errcode"
	"github.com/sandboxrt/sandbox/gateway"
	"github.com/sandboxrt/sandbox/internal/atomicfile"
	"github.com/sandboxrt/sandbox/runtime"
	"github.com/sandboxrt/sandbox/typegen"
)

// Saved scripts. save_script keeps a snippet under a name; a snippet then
// calls it as scripts.<name>(input), which runs the script's code in a
// fresh run (a nested one: runtime.Request.Nested) as the same caller, with
// what is left of the calling run's tool calls and time, and the input as
// the global `input`. A script is its owner's (the principal that saved
// it), unless the operator shares it (`sandbox scripts share`).
// search_tools finds the caller's scripts beside the catalog's tools, with
// declarations typed from their input schema.

// ScriptNamespace is the namespace of saved scripts in a snippet. No
// upstream server may take the name (config refuses it).
const ScriptNamespace = "scripts"

// maxScriptDepth bounds scripts calling scripts.
const maxScriptDepth = 3

// Script is a saved snippet.
type Script struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Code        string          `json:"code"`
	InputSchema json.RawMessage `json:"inputSchema,omitempty"`
	// Owner is the principal that saved it (auth.Principal.Key()).
	Owner string `json:"owner"`
	// Shared makes it every principal's to call (the operator's choice).
	Shared bool      `json:"shared,omitempty"`
	Saved  time.Time `json:"saved"`
}

var scriptName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,62}$`)

// MaxScriptsPerPrincipal and MaxScriptBytesPerPrincipal bound what one
// principal saves (Script.Size of all its scripts), in every ScriptStore.
const (
	MaxScriptsPerPrincipal     = 200
	MaxScriptBytesPerPrincipal = 4 << 20
)

// Size is what a script counts against MaxScriptBytesPerPrincipal.
func (s *Script) Size() int { return len(s.Code) + len(s.Description) + len(s.InputSchema) }

// ScriptStore keeps saved scripts. The default is a ScriptBook (memory and
// a file); a store replicas share implements the same interface and passes
// state/statetest.TestScriptStore.
type ScriptStore interface {
	// All lists every script of every owner, sorted by owner and name.
	All(ctx context.Context) ([]Script, error)
	// Visible lists the scripts a principal may call, sorted by name: its
	// own, and the shared ones of others (its own win a name they share).
	Visible(ctx context.Context, principal string) ([]Script, error)
	// Put saves or replaces a script of its owner (a replacement keeps
	// Shared), within the limits above (TooManyScripts, ScriptsTooLarge).
	Put(ctx context.Context, s Script) error
	// Delete removes an owner's script; false when there was none.
	Delete(ctx context.Context, owner, name string) (bool, error)
	// Share marks an owner's script shared (or not).
	Share(ctx context.Context, owner, name string, shared bool) error
}

// TooManyScripts is Put's error for an owner at MaxScriptsPerPrincipal.
func TooManyScripts() error {
	return fmt.Errorf("you have %d saved scripts, the most there may be; delete some with delete_script", MaxScriptsPerPrincipal)
}

// ScriptsTooLarge is Put's error for an owner whose scripts would take total
// bytes, over MaxScriptBytesPerPrincipal.
func ScriptsTooLarge(total int) error {
	return fmt.Errorf("your saved scripts would take %d bytes, over the %d a principal may keep; delete some with delete_script or save shorter code", total, MaxScriptBytesPerPrincipal)
}

// NoSuchScript is Share's error for a script that does not exist.
func NoSuchScript(owner, name string) error { return fmt.Errorf("%s has no script %q", owner, name) }

// ScriptBook keeps saved scripts, in memory and (with a path) in a file.
type ScriptBook struct {
	mu      sync.Mutex
	path    string
	scripts map[string]map[string]*Script // owner -> name -> script
}

// OpenScripts opens the scripts kept in dir (scripts.json); "" keeps them
// in memory.
func OpenScripts(dir string) (*ScriptBook, error) {
	b := &ScriptBook{scripts: map[string]map[string]*Script{}}
	if dir == "" {
		return b, nil
	}
	b.path = filepath.Join(dir, "scripts.json")
	data, err := os.ReadFile(b.path)
	if os.IsNotExist(err) {
		return b, nil
	}
	if err != nil {
		return nil, err
	}
	var f struct {
		Version int       `json:"version"`
		Scripts []*Script `json:"scripts"`
	}
	if err := json.Unmarshal(data, &f); err != nil || f.Version != 1 {
		return nil, fmt.Errorf("%s is not a saved-scripts file (move it away to start empty): %v", b.path, err)
	}
	for _, s := range f.Scripts {
		if b.scripts[s.Owner] == nil {
			b.scripts[s.Owner] = map[string]*Script{}
		}
		b.scripts[s.Owner][s.Name] = s
	}
	return b, nil
}

// save writes the file; b.mu is held.
func (b *ScriptBook) save() error {
	if b.path == "" {
		return nil
	}
	all := b.allLocked()
	data, err := json.MarshalIndent(map[string]any{"version": 1, "scripts": all}, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(b.path, data)
}

// writeFileAtomic writes what code mode keeps in its directories (scripts,
// store values, learned shapes): a crash leaves the old or the new file
// whole. The file is the owner's only.
func writeFileAtomic(path string, data []byte) error {
	return atomicfile.WriteAll(path, data, 0o600, 0o700)
}

func (b *ScriptBook) allLocked() []*Script {
	var all []*Script
	for _, byName := range b.scripts {
		for _, s := range byName {
			all = append(all, s)
		}
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].Owner != all[j].Owner {
			return all[i].Owner < all[j].Owner
		}
		return all[i].Name < all[j].Name
	})
	return all
}

// All implements ScriptStore.
func (b *ScriptBook) All(context.Context) ([]Script, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []Script
	for _, s := range b.allLocked() {
		out = append(out, *s)
	}
	return out, nil
}

// Visible implements ScriptStore.
func (b *ScriptBook) Visible(_ context.Context, principal string) ([]Script, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	byName := map[string]*Script{}
	for owner, scripts := range b.scripts {
		for name, s := range scripts {
			if owner == principal || (s.Shared && byName[name] == nil) {
				byName[name] = s
			}
		}
	}
	for name, s := range b.scripts[principal] {
		byName[name] = s
	}
	out := make([]Script, 0, len(byName))
	for _, s := range byName {
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Put implements ScriptStore.
func (b *ScriptBook) Put(_ context.Context, s Script) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.scripts[s.Owner] == nil {
		b.scripts[s.Owner] = map[string]*Script{}
	}
	total := s.Size()
	for name, other := range b.scripts[s.Owner] {
		if name != s.Name {
			total += other.Size()
		}
	}
	if old, ok := b.scripts[s.Owner][s.Name]; ok {
		s.Shared = old.Shared // replacing keeps the operator's choice
	} else if len(b.scripts[s.Owner]) >= MaxScriptsPerPrincipal {
		return TooManyScripts()
	}
	if total > MaxScriptBytesPerPrincipal {
		return ScriptsTooLarge(total)
	}
	b.scripts[s.Owner][s.Name] = &s
	return b.save()
}

// Delete implements ScriptStore.
func (b *ScriptBook) Delete(_ context.Context, owner, name string) (bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.scripts[owner][name]; !ok {
		return false, nil
	}
	delete(b.scripts[owner], name)
	if len(b.scripts[owner]) == 0 {
		delete(b.scripts, owner)
	}
	return true, b.save()
}

// Share implements ScriptStore.
func (b *ScriptBook) Share(_ context.Context, owner, name string, shared bool) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	s, ok := b.scripts[owner][name]
	if !ok {
		return NoSuchScript(owner, name)
	}
	s.Shared = shared
	return b.save()
}

// scriptTools are a principal's visible scripts as typegen tools, named
// as a snippet calls them.
func scriptTools(scripts []Script) ([]typegen.Tool, *typegen.Names) {
	tools := make([]typegen.Tool, len(scripts))
	for i, s := range scripts {
		schema := s.InputSchema
		if len(schema) == 0 {
			schema = json.RawMessage(`{"type":"object"}`)
		}
		tools[i] = typegen.Tool{Server: ScriptNamespace, Name: s.Name, Description: s.Description, InputSchema: schema}
	}
	return tools, typegen.AssignNames(tools)
}

// withLearnedResults gives script tools the result types learned from
// their calls, as declared to caller.
func (e *Engine) withLearnedResults(tools []typegen.Tool, scripts []Script, caller auth.Caller) {
	viewer := shapeProducer(caller.Principal)
	for i := range tools {
		tools[i].InferredOutput, tools[i].InferredFrom = e.shapes.lookup(scriptShape(scripts[i].Name), scriptDefinition(&scripts[i]), viewer)
	}
}

// compileScriptSchema compiles a script's input schema.
func compileScriptSchema(raw json.RawMessage) (*jsonschema.Schema, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("inputSchema is not JSON: %v", err)
	}
	if m, ok := doc.(map[string]any); !ok || (m["type"] != nil && m["type"] != "object") {
		return nil, fmt.Errorf(`inputSchema must describe an object ({"type": "object", "properties": {...}}): a script's input is an object of named parameters`)
	}
	s, err := gateway.CompileSchema(raw)
	if err != nil {
		return nil, fmt.Errorf("inputSchema is not a valid JSON Schema (keep it self-contained: it cannot load other documents): %v", err)
	}
	return s, nil
}

// checkInput says what is wrong with input for the script's schema, or nil.
func (s *Script) checkInput(input json.RawMessage) error {
	schema, err := compileScriptSchema(s.InputSchema)
	if err != nil || schema == nil {
		return nil // none, or one that was checked when saved
	}
	var v any
	if err := json.Unmarshal(input, &v); err != nil {
		return errors.New("it is not JSON")
	}
	if err := schema.Validate(v); err != nil {
		return errors.New(strings.Join(strings.Fields(err.Error()), " "))
	}
	return nil
}

// SaveScript checks and saves a script for caller: a valid name, a
// description, code that compiles, an object input schema.
func (e *Engine) SaveScript(ctx context.Context, caller auth.Caller, s Script) (err error) {
	defer func(start time.Time) { e.auditScript(caller, "save_script", s.Name, s.Code, start, saveOutcome(err)) }(time.Now())
	if caller.Principal.IsAnonymous() {
		return errScriptsNeedPrincipal()
	}
	if err := e.checkScript(ctx, caller, s); err != nil {
		return err
	}
	s.Owner = caller.Principal.Key()
	s.Saved = time.Now().UTC()
	if err := e.scripts.Put(ctx, s); err != nil {
		return err
	}
	e.scriptsChanged(s.Owner)
	return nil
}

// saveOutcome is a save's outcome for the audit log: the code an agent is
// answered with (the MCP face answers VALIDATION_FAILED for every refusal
// but a gateway error's own, BUSY while the code is checked).
func saveOutcome(err error) string {
	var ge *gateway.Error
	switch {
	case err == nil:
		return "OK"
	case errors.As(err, &ge):
		return string(ge.Code)
	}
	return string(gateway.CodeValidationFailed)
}

// ScriptCheck is what CheckScript found: the script would be saved, and
// this is how later snippets would see it.
type ScriptCheck struct {
	// Call is how a snippet calls it: "scripts.weeklyReport".
	Call string
	// Declaration is its .d.ts, as search_tools would declare it (without
	// the shared preamble).
	Declaration string
	// Replaces is the caller's saved script of the same name that saving
	// would replace, if any.
	Replaces *Script
	// Refused says why the store would refuse it (too many scripts, too
	// many bytes), when it would; "" when it would not.
	Refused string
}

// CheckScript checks a script for caller as SaveScript does (the name, the
// description, the input schema, the code compiling in a worker) and says
// how later snippets would see it, saving nothing: an agent can look
// before it saves.
func (e *Engine) CheckScript(ctx context.Context, caller auth.Caller, s Script) (*ScriptCheck, error) {
	if caller.Principal.IsAnonymous() {
		return nil, errScriptsNeedPrincipal()
	}
	if err := e.checkScript(ctx, caller, s); err != nil {
		return nil, err
	}
	s.Owner = caller.Principal.Key()
	tools, names := scriptTools([]Script{s})
	out, err := typegen.Generate(tools, typegen.Options{Names: names})
	if err != nil {
		return nil, err
	}
	b, _ := names.Lookup(tools[0].ID())
	check := &ScriptCheck{Call: ScriptNamespace + "." + b.Function, Declaration: strings.TrimPrefix(out.DTS, typegen.Preamble)}
	// What the store would say, from the caller's own scripts (Put checks
	// again when it saves: another save may come between).
	own, total := 0, s.Size()
	for _, v := range e.visibleScripts(ctx, caller) {
		if v.Owner != s.Owner {
			continue
		}
		if v.Name == s.Name {
			check.Replaces = &v
			continue
		}
		own++
		total += v.Size()
	}
	switch {
	case check.Replaces == nil && own >= MaxScriptsPerPrincipal:
		check.Refused = TooManyScripts().Error()
	case total > MaxScriptBytesPerPrincipal:
		check.Refused = ScriptsTooLarge(total).Error()
	}
	return check, nil
}

// checkScript is what saving a script checks: a valid name, a description,
// an object input schema, and code that compiles (in a worker, as any
// snippet: the parent never parses agent code).
func (e *Engine) checkScript(ctx context.Context, caller auth.Caller, s Script) error {
	switch {
	case !scriptName.MatchString(s.Name):
		return fmt.Errorf("name %q: use 1 to 63 lower-case letters, digits and _, starting with a letter (e.g. \"weekly_report\")", s.Name)
	case strings.TrimSpace(s.Description) == "":
		return fmt.Errorf("description is empty: say what the script does and returns, as a tool's description would; search_tools finds scripts by it")
	case strings.TrimSpace(s.Code) == "":
		return fmt.Errorf("code is empty")
	}
	if _, err := compileScriptSchema(s.InputSchema); err != nil {
		return err
	}
	if e.rt == nil {
		return fmt.Errorf("this engine has no runtime to check the code with")
	}
	check, err := e.rt.Run(ctx, runtime.Request{Code: s.Code, Filename: s.Name + ".ts", Caller: caller, CompileOnly: true})
	if err != nil {
		return err
	}
	if !check.OK {
		return fmt.Errorf("the code does not compile: %s", check.Error.Error())
	}
	return nil
}

// DeleteScript deletes one of caller's saved scripts; false when it has
// none of that name.
func (e *Engine) DeleteScript(ctx context.Context, caller auth.Caller, name string) (bool, error) {
	start := time.Now()
	if caller.Principal.IsAnonymous() {
		return false, errScriptsNeedPrincipal()
	}
	return e.deleteScript(ctx, caller, caller.Principal.Key(), name, name, start)
}

// deleteScript deletes owner's script name for by (the owner, or an
// operator in the console) and writes the audit line naming it as audited.
func (e *Engine) deleteScript(ctx context.Context, by auth.Caller, owner, name, audited string, start time.Time) (bool, error) {
	deleted, err := e.scripts.Delete(ctx, owner, name)
	if deleted {
		e.scriptsChanged("") // it may have been shared: every principal's
	}
	outcome := "OK"
	switch {
	case err != nil:
		outcome = string(gateway.CodeInternal)
	case !deleted:
		outcome = string(gateway.CodeNotFound)
	}
	e.auditScript(by, "delete_script", audited, "", start, outcome)
	return deleted, err
}

// auditScript records a saved script's save or delete: who, which script,
// how it ended, and the size and SHA-256 of the code saved, never the code.
// op names the operation as the audit log does ("save_script",
// "delete_script"; docs/operations.md), whichever way it came.
func (e *Engine) auditScript(caller auth.Caller, op, name, code string, start time.Time, outcome string) {
	if e.opts.Audit == nil {
		return
	}
	r := gateway.AuditRecord{Kind: gateway.AuditKindScript, Principal: caller.Principal.Key(), Session: string(caller.Session), Tool: op,
		Name: truncateRunes(name, 200), Outcome: outcome, DurationMs: float64(time.Since(start).Microseconds()) / 1000, ArgBytes: len(code)}
	if code != "" {
		sum := sha256.Sum256([]byte(code))
		r.ArgsSHA256 = hex.EncodeToString(sum[:])
	}
	e.opts.Audit.Audit(r)
}

// OnScriptsChanged has changed called after each script saved (SaveScript)
// or deleted (DeleteScript) through the engine, with the Key of the
// principal whose callable scripts changed, or "" when every principal's
// may have (a shared script). The MCP face's CallerMCPTools follow them so
// (sandbox serve has its front end's RefreshCallerTools hear it). changed
// runs on the goroutine that saved or deleted, and must not block.
func (e *Engine) OnScriptsChanged(changed func(principal string)) {
	e.watchMu.Lock()
	e.scriptWatchers = append(e.scriptWatchers, changed)
	e.watchMu.Unlock()
}

// scriptsChanged tells the watchers that principal's scripts changed: when
// one of the scripts it may call is shared, every principal's did.
func (e *Engine) scriptsChanged(principal string) {
	e.watchMu.Lock()
	watchers := e.scriptWatchers
	e.watchMu.Unlock()
	if len(watchers) == 0 {
		return
	}
	if principal != "" {
		scripts, err := e.scripts.Visible(context.Background(), principal)
		if err != nil {
			principal = "" // cannot tell: every principal's may have
		}
		for _, s := range scripts {
			if s.Shared {
				principal = ""
				break
			}
		}
	}
	for _, changed := range watchers {
		changed(principal)
	}
}

// visibleScripts is callerScripts for listings (search, a caller's MCP
// tools): a store that cannot answer lists nothing, and the log says why.
func (e *Engine) visibleScripts(ctx context.Context, caller auth.Caller) []Script {
	scripts, err := e.callerScripts(ctx, caller)
	if err != nil {
		e.log.Warn("the saved scripts could not be read", "principal", caller.Principal.Key(), "error", err)
	}
	return scripts
}

type scriptDepthKey struct{}

// scriptRun is what a run's script calls share: one at a time, and the
// calling run's tool calls and time.
type scriptRun struct {
	mu     sync.Mutex
	limits runtime.Limits
	calls  *callCounter
	root   string // the top-level run (rootRunKey)
}

// callCounter counts the tool calls a run (and the scripts it calls) made.
type callCounter struct {
	mu sync.Mutex
	n  int
}

func (c *callCounter) add(n int) {
	c.mu.Lock()
	c.n += n
	c.mu.Unlock()
}

func (c *callCounter) get() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// callScript runs scripts.<function>(input) for the run's caller: a
// member of the open namespace ScriptNamespace.
func (e *Engine) callScript(ctx context.Context, call runtime.ToolCall, sr *scriptRun) (json.RawMessage, error) {
	fn := call.Target.Function
	scripts, err := e.callerScripts(ctx, call.Caller)
	if err != nil {
		return nil, &runtime.ToolError{Code: string(gateway.CodeInternal), Message: "the saved scripts could not be read: " + err.Error()}
	}
	tools, names := scriptTools(scripts)
	var script *Script
	for i := range tools {
		if b, ok := names.Lookup(tools[i].ID()); ok && b.Function == fn {
			script = &scripts[i]
		}
	}
	if script == nil {
		var have []string
		for _, b := range names.Bindings() {
			have = append(have, ScriptNamespace+"."+b.Function)
		}
		msg := fmt.Sprintf("there is no saved script %s.%s", ScriptNamespace, fn)
		switch {
		case len(have) > 0:
			msg += "; you have " + strings.Join(have, ", ")
		case call.Caller.Principal.IsAnonymous():
			msg += fmt.Sprintf("; %s, so scripts cannot be saved for you: %s", notAuthenticated, configureAuth)
		default:
			msg += "; save one with save_script"
		}
		return nil, &runtime.ToolError{Code: string(gateway.CodeUnknownTool), Message: msg}
	}
	depth, _ := ctx.Value(scriptDepthKey{}).(int)
	if depth >= maxScriptDepth {
		return nil, &runtime.ToolError{Code: CodeScriptFailed, Message: fmt.Sprintf("scripts.%s: scripts call scripts at most %d deep", fn, maxScriptDepth)}
	}
	if err := script.checkInput(call.Arguments); err != nil {
		return nil, &runtime.ToolError{Code: string(gateway.CodeValidationFailed),
			Message: fmt.Sprintf("scripts.%s: the input does not match the script's inputSchema: %v; the schema is %s", fn, err, script.InputSchema)}
	}
	// One script at a time per run: a nested run takes a worker, and a
	// snippet firing scripts in a Promise.all must not take them all.
	sr.mu.Lock()
	defer sr.mu.Unlock()
	limits := sr.limits
	limits.ToolCalls = max(1, sr.limits.ToolCalls-sr.calls.get())
	if deadline, ok := ctx.Deadline(); ok {
		limits.Timeout = max(time.Millisecond, min(limits.Timeout, time.Until(deadline)))
	}
	nested := &callCounter{}
	nestedCtx := context.WithValue(context.WithValue(ctx, scriptDepthKey{}, depth+1), rootRunKey{}, sr.root)
	res, err := e.execute(nestedCtx, ExecuteRequest{
		Code: script.Code, Filename: script.Name + ".ts", Limits: limits, Caller: call.Caller, Input: call.Arguments}, true, nested)
	// The script's calls count against the calling run's budget, and its
	// console lines show in the calling run's output.
	sr.calls.add(nested.get())
	if call.Charge != nil {
		call.Charge(nested.get())
	}
	if err == nil && call.Log != nil {
		for _, l := range res.Logs {
			call.Log(runtime.LogEntry{Level: l.Level, Message: "[scripts." + fn + "] " + l.Message})
		}
	}
	if err != nil {
		if ge, ok := err.(*gateway.Error); ok {
			return nil, &runtime.ToolError{Code: string(ge.Code), Message: "scripts." + fn + ": " + ge.Message, Data: ge.Data}
		}
		return nil, &runtime.ToolError{Code: CodeScriptFailed, Message: "scripts." + fn + ": " + err.Error()}
	}
	if !res.OK {
		data, _ := json.Marshal(res.Error)
		return nil, &runtime.ToolError{Code: CodeScriptFailed, Message: fmt.Sprintf("scripts.%s failed: %s", fn, res.Error.Error()), Data: data}
	}
	if len(res.Value) == 0 {
		return json.RawMessage("null"), nil
	}
	e.shapes.observe(scriptShape(script.Name), scriptDefinition(script), res.Value, shapeProducer(call.Caller.Principal))
	return res.Value, nil
}

// scriptDefinition keys a script's learned result type: saving it again
// starts over.
func scriptDefinition(s *Script) string {
	return definitionHash(typegen.Tool{Server: ScriptNamespace, Name: s.Name, Description: s.Description + "\x00" + s.Code, InputSchema: s.InputSchema})
}

// CodeScriptFailed is the MCPToolError code of a saved script that threw
// or hit a limit; data is the script's error (message, line, stack).
const CodeScriptFailed = string(errcode.ScriptFailed)
