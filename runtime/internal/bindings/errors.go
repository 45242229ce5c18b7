package bindings

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/dop251/goja"

	"github.com/sandboxrt/sandbox/runtime/internal/jsonvm"
)

// defineErrorClass defines the global MCPToolError, a subclass of Error, as
// runtime.ToolError documents it, built with the Go API (no source is
// evaluated). Snippets may construct it too, which keeps `instanceof` honest.
func (in *Installed) defineErrorClass() error {
	vm := in.vm
	parse, ok := goja.AssertFunction(vm.Get("JSON").ToObject(vm).Get("parse"))
	if !ok {
		return fmt.Errorf("bindings: JSON.parse is missing")
	}
	in.parse = parse
	in.json = jsonvm.NewParser(vm)
	errorCtor := vm.Get("Error").ToObject(vm)
	errorFn, _ := goja.AssertConstructor(errorCtor)
	in.errorFn = func(this goja.Value, args ...goja.Value) (goja.Value, error) {
		o, err := errorFn(nil, args...)
		return o, err
	}

	proto := vm.CreateObject(errorCtor.Get("prototype").ToObject(vm))
	_ = proto.DefineDataProperty("name", vm.ToValue("MCPToolError"), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
	_ = proto.DefineDataProperty("message", vm.ToValue(""), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
	in.errProto = proto

	ctor := vm.ToValue(func(call goja.ConstructorCall) *goja.Object {
		info := ErrorInfo{Message: call.Argument(0).String(), Code: CodeUnspecified}
		if goja.IsUndefined(call.Argument(0)) {
			info.Message = ""
		}
		if opts, ok := call.Argument(1).(*goja.Object); ok {
			if v := opts.Get("code"); v != nil && !goja.IsUndefined(v) {
				info.Code = v.String()
			}
			if v := opts.Get("tool"); v != nil && !goja.IsUndefined(v) {
				info.Tool = v.String()
			}
		}
		obj := in.newError(info, nil, "")
		if p := call.This.Prototype(); p != nil {
			_ = obj.SetPrototype(p)
		}
		if opts, ok := call.Argument(1).(*goja.Object); ok {
			if v := opts.Get("data"); v != nil {
				_ = obj.Set("data", v)
			}
		}
		return obj
	}).(*goja.Object)
	_ = ctor.DefineDataProperty("prototype", proto, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE)
	_ = ctor.DefineDataProperty("name", vm.ToValue("MCPToolError"), goja.FLAG_FALSE, goja.FLAG_TRUE, goja.FLAG_FALSE)
	_ = proto.DefineDataProperty("constructor", ctor, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
	_ = ctor.SetPrototype(errorCtor)
	in.errorCtor = ctor
	return vm.GlobalObject().DefineDataProperty("MCPToolError", ctor, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
}

// NewError creates an MCPToolError. stack, when not empty, replaces the
// captured stack: a tool call fails after the call site has returned, so the
// runtime passes the stack it captured when the call started (the snippet's
// own line), formatted as goja formats stacks.
func (in *Installed) NewError(info ErrorInfo, stack string) *goja.Object {
	return in.newError(info, in.errProto, stack)
}

func (in *Installed) newError(info ErrorInfo, proto *goja.Object, stack string) *goja.Object {
	vm := in.vm
	v, err := in.errorFn(nil, vm.ToValue(info.Message))
	var obj *goja.Object
	if err == nil {
		obj, _ = v.(*goja.Object)
	}
	if obj == nil { // cannot happen with the VM's own Error; keep a usable object anyway
		obj = vm.NewObject()
		_ = obj.Set("message", info.Message)
	}
	if proto != nil {
		_ = obj.SetPrototype(proto)
	}
	if stack != "" {
		_ = obj.DefineDataProperty("stack", vm.ToValue("MCPToolError: "+info.Message+"\n"+stack), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
	} else if s := obj.Get("stack"); s != nil {
		// The VM's Error named itself "Error"; say what it is.
		str := s.String()
		if len(str) >= 5 && str[:5] == "Error" {
			_ = obj.DefineDataProperty("stack", vm.ToValue("MCPToolError"+str[5:]), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
		}
	}
	_ = obj.Set("tool", info.Tool)
	_ = obj.Set("code", info.Code)
	if len(info.Data) > 0 {
		if data, err := in.ParseJSON(info.Data); err == nil {
			_ = obj.Set("data", data)
		}
	}
	return obj
}

// ParseJSON turns JSON into the VM values the VM's own JSON.parse gives:
// plain objects in key order, never wrapped Go values. jsonvm builds them
// in one pass (goja's JSON.parse reads through encoding/json's tokens, a
// quarter of a worker's CPU a tool call); input it does not take (malformed,
// or nested past jsonvm.MaxDepth) goes to the VM's JSON.parse, captured
// before user code ran (so a snippet replacing JSON.parse changes nothing),
// which throws the SyntaxError it always threw.
func (in *Installed) ParseJSON(data json.RawMessage) (goja.Value, error) {
	v, err := in.json.Parse(data)
	if err == nil {
		return v, nil
	}
	if errors.Is(err, jsonvm.ErrTooDeep) {
		if d := jsonvm.NestingDepth(data); d > MaxJSONDepth {
			return nil, fmt.Errorf("it nests arrays and objects %d levels deep, more than the %d a snippet takes", d, MaxJSONDepth)
		}
	}
	return in.parse(goja.Undefined(), in.vm.ToValue(string(data)))
}

// MaxJSONDepth bounds the nesting ParseJSON takes. goja's JSON.parse
// recurses in Go for each level: 100,000 levels fit in 32 MB of stack, and
// 1,000,000 overflowed a worker's 256 MB, a fatal error that ended the
// worker (measured 2026-11-28), so deeper input is refused rather than
// handed to it.
const MaxJSONDepth = 100_000
