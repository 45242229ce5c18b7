package runtime

import (
	"strings"
	"testing"
)

// TestEngineTypeErrorsNameTheOperation: goja's own TypeError texts never
// reach the agent as they are: each says which operation failed, and the
// value it names is cut short (a secret a tool returned must not come back
// whole, nor a megabyte string).
func TestEngineTypeErrorsNameTheOperation(t *testing.T) {
	secret := "sk-" + strings.Repeat("0123456789", 5) // 53 characters
	bothModes(t, func(t *testing.T, rt *Runtime) {
		for _, c := range []struct {
			code string
			want string
		}{
			{`return "a" in s`, "a value that is not an object was used as one (the right side of `in` or `instanceof`, or a call of something that is not a function): 'sk-012345678901234567890… (53 characters)'"},
			{`return s()`, "a call of something that is not a function"},
			{`return Reflect.ownKeys(s)`, "ownKeys() needs an object (or a function) where it got 'sk-012345678901234567890… (53 characters)'"},
			{`return [1].reduce(s)`, "reduce(): a callback must be a function, not 'sk-0"},
			{`return ({})()`, "called something that is not a function: '[object Object]'"},
			{`return {} instanceof ({} as any)`, "the right side of `instanceof` must be a class or function, not '[object Object]'"},
			{`return Object.setPrototypeOf({}, s as any)`, "setPrototypeOf(): a prototype must be an object or null, not 'sk-0"},
			{`const o: any = null; return o[s]`, "Cannot read properties of undefined or null (reading 'sk-012345678901234567890… (53 characters)')"},
			{`const o: any = {}; return o.list.length`, "Cannot read properties of undefined or null (reading 'length')"},
			{`return (s as any).map((x: any) => x)`, "the value has no method 'map' to call: it is not the type the code expects"},
			{`const o: any = Object.freeze({}); o[s] = 1; return o`, "Cannot add property 'sk-012345678901234567890… (53 characters)', object is not extensible"},
			{`return Object.defineProperty(Object.freeze({}), s, {value: 1})`, "defineProperty(): Cannot define property 'sk-0"},
			{`return Symbol.keyFor(s)`, "keyFor(): a symbol was needed, not 'sk-0"},
			{`return Object.defineProperty({}, "x", s)`, "defineProperty(): a property descriptor must be an object, not 'sk-0"},
			{`throw new TypeError("my own text: " + s)`, "my own text: " + secret},
		} {
			res := run(t, rt, Request{Code: "const s: any = " + `"` + secret + `"` + ";\n" + c.code})
			if res.OK || res.Error.Name != "TypeError" || res.Error.Line != 2 {
				t.Fatalf("%s: %+v", c.code, res.Error)
			}
			msg := res.Error.Message
			if !strings.Contains(msg, c.want) {
				t.Errorf("%s:\n got %q\nwant %q", c.code, msg, c.want)
			}
			if strings.Contains(msg, secret) && !strings.Contains(c.code, "my own text") {
				t.Errorf("%s: the whole value came back: %q", c.code, msg)
			}
			for _, raw := range []string{"Value is not an object", "Cannot read property '", "has no member", "Expecting a function", "may only be an Object", "is not a symbol", "description must be"} {
				if strings.Contains(msg, raw) {
					t.Errorf("%s: goja's own text came through: %q", c.code, msg)
				}
			}
		}
		// An unhandled rejection's warning is rewritten the same way.
		res := run(t, rt, Request{Code: `const s: any = "` + secret + `"; Promise.resolve().then(() => s()); return 1`})
		if !res.OK || len(res.Logs) != 1 || !strings.Contains(res.Logs[0].Message, "a call of something that is not a function") || strings.Contains(res.Logs[0].Message, secret) {
			t.Errorf("unhandled rejection: %+v", res.Logs)
		}
	})
}

func TestCutValue(t *testing.T) {
	for in, want := range map[string]string{
		"short":                    "'short'",
		"a\nb":                     `'a\nb'`,
		strings.Repeat("é", 30):    "'" + strings.Repeat("é", 24) + "… (30 characters)'",
		strings.Repeat("x", 1<<20): "'" + strings.Repeat("x", 24) + "… (1048576 characters)'",
	} {
		if got := cutValue(in); got != want {
			t.Errorf("cutValue(%.30q) = %q, want %q", in, got, want)
		}
	}
}
