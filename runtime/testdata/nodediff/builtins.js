// === JSON round trip keeps key order
return JSON.parse(JSON.stringify({ b: 1, a: [1, 2, { c: null }] }));
// === JSON.stringify with indent
return JSON.stringify({ a: [1, 2] }, null, 2);
// === JSON.stringify of undefined members
return JSON.stringify({ a: undefined, b: () => 1, c: [undefined] });
// === JSON.parse reviver
return JSON.parse('{"a":1,"b":2}', (k, v) => typeof v === "number" ? v * 10 : v);
// === JSON.parse error
JSON.parse("{bad");
// === Date ISO in UTC
return new Date(Date.UTC(2024, 1, 29, 12, 30)).toISOString();
// === Date arithmetic
const d = new Date("2024-03-01T00:00:00Z"); d.setUTCDate(d.getUTCDate() - 1); return d.toISOString().slice(0, 10);
// === Date.parse of an ISO date
return Date.parse("2025-01-15T10:00:00.000Z");
// === Date invalid
return [isNaN(new Date("nope").getTime()), String(new Date(NaN))];
// === Math basics
return [Math.max(1, 5, 3), Math.round(2.5), Math.round(-2.5), Math.trunc(-4.7), Math.sign(-3), Math.hypot(3, 4)];
// === number formatting
return [(1234.5678).toFixed(2), (0.000001234).toPrecision(3), (255).toString(16), (1e21).toString(), Number("0x1f")];
// === parseInt and parseFloat
return [parseInt("08"), parseInt("1e3"), parseFloat("3.14abc"), Number(""), Number("  12  ")];
// === string methods
return ["  pad ".trim(), "abc".padStart(5, "*"), "a-b-c".split("-"), "Hello".at(-1), "x".repeat(3), "aXbX".replaceAll("X", "_")];
// === string case and search
return ["Straße".toUpperCase(), "İ".toLowerCase().length, "hello world".indexOf("o", 5), "abc".includes("bc"), "abc".startsWith("b", 1)];
// === template literal
const n = 3; return `${n} item${n === 1 ? "" : "s"}`;
// === string comparison
return ["a" < "b", "B" < "a", "10" < "9", ["b", "a", "C"].sort()];
// === array methods
return [[3, 1, 2].toSorted(), [1, 2, 3].findLast(x => x < 3), [1, [2, [3, [4]]]].flat(2), [1, 2, 3].with(1, 9), Array.from({ length: 3 }, (_, i) => i * i)];
// === array reduce and group
const xs = [{ k: "a", v: 1 }, { k: "b", v: 2 }, { k: "a", v: 3 }];
return Object.fromEntries(Object.entries(Object.groupBy(xs, x => x.k)).map(([k, g]) => [k, g.reduce((s, x) => s + x.v, 0)]));
// === sort stability and numbers
return [[10, 9, 1, 100].sort(), [10, 9, 1, 100].sort((a, b) => a - b), [{ a: 1, i: 0 }, { a: 0, i: 1 }, { a: 1, i: 2 }].sort((x, y) => x.a - y.a).map(x => x.i)];
// === array holes and includes
return [[1, , 3].length, [NaN].includes(NaN), [NaN].indexOf(NaN), Array(3).fill(0)];
// === Map and Set
const m = new Map([["a", 1]]); m.set("b", 2); const s = new Set([1, 2, 2, 3]);
return [[...m.keys()], m.size, [...s], s.has(2), [...new Set("hello")].join("")];
// === Map preserves insertion order and key types
const m = new Map(); m.set(1, "n"); m.set("1", "s"); return [m.get(1), m.get("1"), m.size];
// === Object helpers
return [Object.keys({ b: 1, a: 2, 1: 3 }), Object.entries({ x: 1 }), Object.assign({}, { a: 1 }, { b: 2 }), Object.hasOwn({ a: 1 }, "a")];
// === spread and destructuring
const { a, ...rest } = { a: 1, b: 2, c: 3 }; const [x, , y = 5] = [1, 2]; return [a, rest, x, y, [...[1, 2], 3]];
// === optional chaining and nullish
const o = { a: { b: null } }; return [o?.a?.b?.c, o.x ?? "def", 0 || "or", 0 ?? "nn"];
// === regexp named groups
const m = "2024-05-06".match(/(?<y>\d{4})-(?<m>\d{2})-(?<d>\d{2})/); return m.groups;
// === regexp matchAll
return [..."a1b22c333".matchAll(/\d+/g)].map(m => [m[0], m.index]);
// === regexp replace with function
return "john smith".replace(/\b\w/g, c => c.toUpperCase());
// === regexp sticky and lastIndex
const r = /a/y; r.lastIndex = 1; return [r.test("ba"), r.lastIndex];
// === regexp split with limit
return "a,b,,c".split(",", 3);
// === promises all and allSettled
const r = await Promise.allSettled([Promise.resolve(1), Promise.reject(new Error("x"))]);
return [await Promise.all([1, Promise.resolve(2)]), r.map(x => x.status)];
// === promise race and any
return [await Promise.race([new Promise(r => setTimeout(() => r("slow"), 20)), Promise.resolve("fast")]), await Promise.any([Promise.reject(1), Promise.resolve(2)])];
// === promise ordering
const log = []; Promise.resolve().then(() => log.push("micro")); setTimeout(() => log.push("macro"), 0); log.push("sync");
await new Promise(r => setTimeout(r, 10)); return log;
// === async error
async function f() { throw new TypeError("t") } try { await f() } catch (e) { return [e.name, e.message, e instanceof TypeError] }
// === AggregateError from any
try { await Promise.any([Promise.reject(1)]) } catch (e) { return e.name }
// === class features
class A { #x = 1; static s = 2; get x() { return this.#x } inc() { this.#x++; return this } } return [new A().inc().x, A.s];
// === generators
function* g() { yield 1; yield* [2, 3]; return 4 } return [...g()];
// === labeled break and closures
const fs = []; for (let i = 0; i < 3; i++) fs.push(() => i); return fs.map(f => f());
// === typeof and instanceof
return [typeof null, typeof [], typeof (() => 1), typeof 1n, [] instanceof Array, Array.isArray([])];
// === BigInt math
return (2n ** 64n).toString();
// === Number edge cases
return [0.1 + 0.2, Number.MAX_SAFE_INTEGER, Number.EPSILON > 0, (-0).toString(), Object.is(-0, 0), 1 / 0];
// === Symbol description and keys
const s = Symbol("tag"); return [s.description, Object.keys({ [s]: 1, a: 2 })];
// === Error message and name
const e = new Error("boom", { cause: "why" }); return [e.name, e.message, e.cause, String(e)];
// === throwing a TypeError
null.x;
// === encodeURIComponent
return [encodeURIComponent("a b&c/d?é"), decodeURIComponent("%E2%82%AC"), encodeURI("http://x/a b")];
// === atob and btoa
return [btoa("hello"), atob("aGVsbG8="), atob(" aGVs bG8= ")];
// === Object.groupBy and Map.groupBy
const m = Map.groupBy([1, 2, 3, 4], x => x % 2 ? "odd" : "even"); return [Object.groupBy([1, 2, 3], x => x > 1 ? "big" : "small"), [...m.keys()]];
// === Array.prototype.at and findLastIndex
return [[1, 2, 3].at(-1), [1, 2, 3].findLastIndex(x => x === 2), [1, 2, 3].toReversed(), [3, 1].toSpliced(1, 0, 2)];
// === string localeCompare default
return ["a", "B", "c"].sort((x, y) => x.localeCompare(y));
// === setTimeout with arguments
return await new Promise(r => setTimeout((a, b) => r(a + b), 1, 2, 3));
// === queueMicrotask
const log = []; queueMicrotask(() => log.push(1)); log.push(0); await null; return log;
// === Promise.withResolvers
const { promise, resolve } = Promise.withResolvers(); setTimeout(() => resolve(42), 1); return await promise;
// === JSON of a Map is an object
return JSON.stringify(new Map([[1, 2]]));
// === Date.now is a number
return typeof Date.now() === "number" && Date.now() > 1.7e12;
// === WeakRef deref
const o = { v: 1 }; const r = new WeakRef(o); return [r.deref() === o, r.deref().v, typeof WeakRef];
// === WeakRef of a primitive throws
new WeakRef(1);
// === WeakRef as a cache
const cache = new Map(); const get = (k) => { const hit = cache.get(k)?.deref(); if (hit) return hit; const v = { k }; cache.set(k, new WeakRef(v)); return v }; return get("a") === get("a");
// === FinalizationRegistry register and unregister
const reg = new FinalizationRegistry(() => {}); const token = {}; reg.register({}, "held", token); return [reg.unregister({}), typeof reg.register];
// === FinalizationRegistry needs a function
new FinalizationRegistry(1);
// === Array.fromAsync of promises
return await Array.fromAsync([Promise.resolve(1), 2, new Promise(r => setTimeout(() => r(3), 5))]);
// === Array.fromAsync of an async generator with a map
async function* g() { yield 1; await null; yield 2 } return await Array.fromAsync(g(), async (x, i) => x * 10 + i);
// === Array.fromAsync of an array-like
return await Array.fromAsync({ length: 2, 0: "a", 1: Promise.resolve("b") });
// === Array.fromAsync rejects with the first rejection
try { await Array.fromAsync([1, Promise.reject(new RangeError("no"))]); return "ok" } catch (e) { return e.name }
// === Array.fromAsync of a Set
return await Array.fromAsync(new Set(["x", "y"]));
// === Array.fromAsync with a bad map
try { await Array.fromAsync([1], 5) } catch (e) { return e.name }
// === for await over an async generator
async function* g() { yield 1; yield 2 } const out = []; for await (const x of g()) out.push(x);
return [out, typeof Symbol.asyncIterator, typeof g()[Symbol.asyncIterator]];
// === a hand-written async iterable
const it = { [Symbol.asyncIterator]() { let i = 0; return { next: async () => ({ value: i, done: i++ >= 2 }) } } };
const out = []; for await (const x of it) out.push(x); return out;
