// === string normalize and length
return ["é".normalize("NFD").length, "e\u0301".normalize("NFC").length, "😀".length, [..."😀"].length];
// === string codePointAt and fromCodePoint
return ["😀".codePointAt(0), String.fromCodePoint(128512, 65), "A".charCodeAt(0), String.fromCharCode(72, 105)];
// === string localeCompare with umlauts
return ["a", "B", "c", "Ä"].sort((x, y) => x.localeCompare(y));
// === string search and match
return ["Hello".search(/l/), "a.b.c".split(".", 2), "abc".match(/z/), "aaa".lastIndexOf("a")];
// === string slice substring substr
return ["hello".slice(-3), "hello".substring(3, 1), "hello".substr(1, 3), "hello".slice(2, -1)];
// === string trimStart trimEnd
return ["  x  ".trimStart(), "  x  ".trimEnd(), "\u00a0x\u2003".trim().length];
// === string raw and escapes
return [String.raw`a\nb${1}`, "tab\there".length, "\u{1F600}" === "😀"];
// === string at and padEnd
return ["abc".at(0), "abc".at(-4), "5".padEnd(3, "0"), "abc".padStart(2)];
// === string concat coercions
return ["a" + 1 + 2, 1 + 2 + "a", "3" * "4", "10" / 4, [] + {}, [1, 2] + ""];
// === string to number edge cases
return [Number("1_000"), Number("0b101"), Number("0o17"), +"  ", +"1e-7", parseInt("z", 36)];
// === number toString and toFixed edge cases
return [(0.1 + 0.2).toString(), (1.005).toFixed(2), (-1.5).toFixed(0), (1e-7).toString(), (123.456).toExponential(2), (0).toFixed(2)];
// === Number statics
return [Number.isInteger(5.0), Number.isSafeInteger(2 ** 53), Number.EPSILON > 0, Number.MAX_SAFE_INTEGER, Number.parseFloat("1.5e3")];
// === Math functions
return [Math.cbrt(27), Math.log2(8), Math.expm1(0), Math.clz32(1), Math.fround(5.5), Math.max(), Math.min(), Math.abs(-0)];
// === BigInt arithmetic
return [String(2n ** 64n), String(-7n / 2n), String(7n % -2n), BigInt.asUintN(8, 257n).toString(), typeof 1n];
// === BigInt in JSON throws
JSON.stringify({ n: 1n });
// === JSON.stringify replacer array and toJSON
return [JSON.stringify({ a: 1, b: 2, c: 3 }, ["a", "c"]), JSON.stringify({ toJSON() { return "x"; } }), JSON.stringify(new Date(0))];
// === JSON.stringify special numbers
return JSON.stringify([NaN, Infinity, -0, 1e21, 0.1]);
// === JSON.stringify unicode escaping
return JSON.stringify(["\u2028", "\ud800", "é", "\u0007"]);
// === JSON.parse big numbers and duplicates
return [JSON.parse("12345678901234567890"), JSON.parse('{"a":1,"a":2}'), JSON.parse(" [1e2] ")];
// === JSON.stringify nested indent string
return JSON.stringify({ a: { b: [1] } }, null, "--");
// === JSON.stringify cycle throws
const o = {}; o.self = o; JSON.stringify(o);
// === Date components in UTC
const d = new Date(Date.UTC(2024, 11, 31, 23, 59, 59, 999)); return [d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDay(), d.getUTCHours(), d.getUTCMilliseconds()];
// === Date overflow normalises
return [new Date(Date.UTC(2025, 0, 32)).toISOString(), new Date(Date.UTC(2025, 1, 29)).toISOString(), new Date(Date.UTC(2025, 12, 1)).toISOString()];
// === Date parsing formats
return [Date.parse("2025-01-15"), Date.parse("2025-01-15T10:00:00+02:00"), Date.parse("2025-01-15T10:00"), isNaN(Date.parse("15/01/2025"))];
// === Date toJSON and toUTCString
const d = new Date(Date.UTC(2025, 5, 1, 8)); return [d.toJSON(), d.toUTCString(), new Date(NaN).toJSON()];
// === Date difference in days
const a = new Date("2025-01-01T00:00:00Z"), b = new Date("2025-03-01T00:00:00Z"); return Math.round((b - a) / 86400000);
// === Date setters return time
const d = new Date(0); return [d.setUTCFullYear(2000), d.setUTCHours(25), d.toISOString()];
// === Date.now is a number near the clock
const t = Date.now(); return [typeof t, t > 1.7e12, Number.isInteger(t)];
// === Symbol description and registry
const s = Symbol("tag"); return [s.description, s.toString(), Symbol.for("k") === Symbol.for("k"), Symbol.keyFor(Symbol.for("k"))];
// === getters setters and defineProperty
const o = { _v: 1, get v() { return this._v * 2; }, set v(x) { this._v = x; } }; o.v = 5; Object.defineProperty(o, "h", { value: 1, enumerable: false }); return [o.v, Object.keys(o), JSON.stringify(o)];
// === classes with private fields and statics
class A { #x = 1; static count = 0; constructor() { A.count++; } get x() { return this.#x; } static #secret() { return 42; } static reveal() { return A.#secret(); } } new A(); return [new A().x, A.count, A.reveal(), Object.keys(new A()).length];
// === class inheritance and super
class B { hi() { return "B"; } } class C extends B { hi() { return super.hi() + "C"; } } return [new C().hi(), new C() instanceof B, Object.getPrototypeOf(C) === B];
// === error cause and message
const e = new Error("outer", { cause: new TypeError("inner") }); return [e.message, e.cause.message, e.cause instanceof TypeError, e.name];
// === AggregateError from Promise.any
try { await Promise.any([Promise.reject(new Error("a")), Promise.reject(new Error("b"))]); } catch (e) { return [e.constructor.name, e.errors.map((x) => x.message)]; }
// === Promise.allSettled
return await Promise.allSettled([Promise.resolve(1), Promise.reject(new Error("no")), 3]).then((r) => r.map((x) => x.status + ":" + (x.value ?? x.reason.message)));
// === Promise.race with timers
return await Promise.race([new Promise((r) => setTimeout(() => r("slow"), 20)), new Promise((r) => setTimeout(() => r("fast"), 1))]);
// === Promise.withResolvers with a timer
const { promise, resolve } = Promise.withResolvers(); setTimeout(() => resolve("done"), 1); return await promise;
// === async ordering of microtasks and timers
const log = []; setTimeout(() => log.push("timeout"), 0); Promise.resolve().then(() => log.push("micro")); queueMicrotask(() => log.push("queued")); log.push("sync"); await new Promise((r) => setTimeout(r, 5)); return log;
// === async generator
async function* gen() { for (let i = 0; i < 3; i++) { await null; yield i; } } const out = []; for await (const v of gen()) out.push(v); return out;
// === generator return and throw
function* g() { try { yield 1; yield 2; } finally { yield "cleanup"; } } const it = g(); return [it.next(), it.return(9), it.next(), it.next()];
// === labeled loops and switch
const out = []; outer: for (let i = 0; i < 3; i++) { for (let j = 0; j < 3; j++) { if (j === 2) continue outer; if (i === 2) break outer; out.push(`${i}${j}`); } } return out;
// === tagged template
const tag = (s, ...v) => s.raw.join("|") + v.join(","); return tag`a${1}b${2}c`;
// === getter on prototype chain and hasOwn
const p = { inherited: 1 }; const o = Object.create(p); o.own = 2; return [Object.hasOwn(o, "inherited"), "inherited" in o, Object.keys(o), o.inherited];
// === Object.freeze in strict code
"use strict"; const o = Object.freeze({ a: 1 }); try { o.a = 2; } catch (e) { return [e.constructor.name, Object.isFrozen(o), o.a]; }
// === Proxy and Reflect
const p = new Proxy({}, { get: (t, k) => (k in t ? t[k] : `no ${String(k)}`) }); p.x = 1; return [p.x, p.y, Reflect.ownKeys({ a: 1, [Symbol.iterator]: 0 }).length, Reflect.has({ b: 1 }, "b")];
