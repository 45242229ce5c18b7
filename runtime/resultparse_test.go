package runtime

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// TestResultsAreWhatJSONParseGives: in both modes, a result reaches the
// snippet as the same values the snippet's own JSON.parse makes of its text
// (key order, integer-like keys, duplicates, __proto__, -0, escapes,
// prototypes), and a setter a snippet put on Object.prototype is not called.
func TestResultsAreWhatJSONParseGives(t *testing.T) {
	t.Parallel()
	raw := `{"b":1,"2":"two","a":[-0,0.5,1e21,9007199254740993,"\u00e9\ud83d\ude00\ud800",null,true,{}],` +
		`"__proto__":{"polluted":1},"b":3,"trap":"x","nested":{"z":[],"10":1,"1":2}}`
	rawLit, _ := json.Marshal(raw)
	code := `Object.defineProperty(Object.prototype, "trap", { set() { globalThis.trapped = true }, configurable: true });
const r = await demo.echo({});
const want = JSON.parse(` + string(rawLit) + `);
function same(x, y, path) {
  if (typeof x !== typeof y) return path + ": typeof";
  if (x === null || typeof x !== "object") return Object.is(x, y) ? "" : path + ": " + String(x) + " vs " + String(y);
  if (Object.getPrototypeOf(x) !== Object.getPrototypeOf(y)) return path + ": prototype";
  const kx = Reflect.ownKeys(x), ky = Reflect.ownKeys(y);
  if (kx.join() !== ky.join()) return path + ": keys " + kx.join() + " vs " + ky.join();
  for (const k of kx) {
    const dx = Object.getOwnPropertyDescriptor(x, k), dy = Object.getOwnPropertyDescriptor(y, k);
    if (dx.writable !== dy.writable || dx.enumerable !== dy.enumerable || dx.configurable !== dy.configurable) return path + "." + String(k) + ": attributes";
    if (k === "length" && Array.isArray(x)) continue;
    const d = same(x[k], y[k], path + "." + String(k));
    if (d) return d;
  }
  return "";
}
return [same(r, want, "$"), JSON.stringify(r), globalThis.trapped === true, Object.keys(r).join()]`
	host := HostFunc(func(ctx context.Context, c ToolCall) (json.RawMessage, error) {
		return json.RawMessage(raw), nil
	})
	bothModes(t, func(t *testing.T, rt *Runtime) {
		res := run(t, rt, Request{Code: code, Tools: demoTools, Host: host})
		mustOK(t, res)
		var got []any
		if err := json.Unmarshal(res.Value, &got); err != nil || len(got) != 4 {
			t.Fatalf("%s: %v", res.Value, err)
		}
		if got[0] != "" {
			t.Errorf("the result differs from JSON.parse's: %v", got[0])
		}
		if s, _ := got[1].(string); !strings.HasPrefix(s, `{"2":"two","b":3,"a":[0,0.5,1e+21,9007199254740992,"é😀�",null,true,{}],"__proto__":{"polluted":1}`) {
			t.Errorf("JSON.stringify of the result = %s", s)
		}
		if got[2] != false {
			t.Error("building the result called a setter on Object.prototype")
		}
		if got[3] != "2,b,a,__proto__,trap,nested" {
			t.Errorf("keys %v", got[3])
		}
	})
}
