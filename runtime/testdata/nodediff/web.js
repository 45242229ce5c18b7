// === randomUUID is a v4 UUID
return /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(crypto.randomUUID());
// === randomUUIDs differ
return crypto.randomUUID() !== crypto.randomUUID();
// === getRandomValues fills and returns its argument
const a = new Uint32Array(8); const r = crypto.getRandomValues(a); return [r === a, a.some(x => x !== 0)];
// === getRandomValues over 65536 bytes
crypto.getRandomValues(new Uint8Array(65537));
// === getRandomValues of exactly 65536 bytes
return crypto.getRandomValues(new Uint8Array(65536)).length;
// === getRandomValues of a Float64Array
crypto.getRandomValues(new Float64Array(2));
// === digest SHA-256 of a string's bytes
const d = await crypto.subtle.digest("SHA-256", new TextEncoder().encode("hello"));
return Array.from(new Uint8Array(d)).map(b => b.toString(16).padStart(2, "0")).join("");
// === digest SHA-1
const d = await crypto.subtle.digest("SHA-1", new TextEncoder().encode("abc"));
return Array.from(new Uint8Array(d)).map(b => b.toString(16).padStart(2, "0")).join("");
// === digest SHA-512 length
return (await crypto.subtle.digest("SHA-512", new Uint8Array([1, 2, 3]))).byteLength;
// === digest SHA-384 with an algorithm object
return (await crypto.subtle.digest({ name: "SHA-384" }, new Uint8Array(0))).byteLength;
// === digest of an ArrayBuffer
const d = await crypto.subtle.digest("SHA-256", new ArrayBuffer(4));
return new Uint8Array(d)[0];
// === digest with an unknown algorithm
await crypto.subtle.digest("MD5", new Uint8Array(1));
// === digest result is an ArrayBuffer
return (await crypto.subtle.digest("SHA-256", new Uint8Array(1))) instanceof ArrayBuffer;
// === dedup key from a hash
const key = async (s) => Array.from(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(s)))).slice(0, 4).map(b => b.toString(16).padStart(2, "0")).join("");
return [await key("a"), await key("a") === await key("a"), await key("a") === await key("b")];
// === TextEncoder encodes UTF-8
return Array.from(new TextEncoder().encode("héllo €😀"));
// === TextEncoder of nothing
return new TextEncoder().encode().length;
// === TextEncoder encoding
return new TextEncoder().encoding;
// === TextEncoder of a lone surrogate
return Array.from(new TextEncoder().encode("a\uD800b"));
// === TextDecoder round trip
return new TextDecoder().decode(new TextEncoder().encode("naïve ✓"));
// === TextDecoder strips a BOM
return new TextDecoder().decode(new Uint8Array([0xEF, 0xBB, 0xBF, 104, 105]));
// === TextDecoder keeps the BOM with ignoreBOM
return new TextDecoder("utf-8", { ignoreBOM: true }).decode(new Uint8Array([0xEF, 0xBB, 0xBF, 104])).length;
// === TextDecoder replaces invalid bytes
return new TextDecoder().decode(new Uint8Array([104, 0xff, 105]));
// === TextDecoder fatal throws
new TextDecoder("utf-8", { fatal: true }).decode(new Uint8Array([0xff]));
// === TextDecoder of a subarray
const b = new TextEncoder().encode("hello world"); return new TextDecoder().decode(b.subarray(6));
// === TextDecoder of nothing
return new TextDecoder().decode();
// === TextDecoder properties
const d = new TextDecoder(); return [d.encoding, d.fatal, d.ignoreBOM];
// === structuredClone of plain data
const v = { a: 1, b: [1, { c: "x" }], n: null, t: true }; const c = structuredClone(v); return [c, c !== v, c.b !== v.b];
// === structuredClone keeps cycles
const v = { name: "root" }; v.self = v; const c = structuredClone(v); return [c.self === c, c !== v];
// === structuredClone keeps shared references
const s = { x: 1 }; const c = structuredClone({ a: s, b: s }); return c.a === c.b;
// === structuredClone of a Date
const c = structuredClone(new Date(86400000)); return [c instanceof Date, c.toISOString()];
// === structuredClone of a Map and a Set
const c = structuredClone({ m: new Map([["k", [1]]]), s: new Set([1, "2"]) }); return [c.m.get("k"), [...c.s]];
// === structuredClone of a RegExp
const c = structuredClone(/ab+c/gi); return [c.source, c.flags, c.test("ABBC")];
// === structuredClone of a function throws
structuredClone({ f() {} });
// === structuredClone of a symbol throws
structuredClone(Symbol("s"));
// === structuredClone of a typed array
const a = new Uint8Array([1, 2, 3]); const c = structuredClone(a); c[0] = 9; return [Array.from(a), Array.from(c), c instanceof Uint8Array];
// === structuredClone drops the prototype
class P { constructor() { this.x = 1 } hi() { return 1 } } const c = structuredClone(new P()); return [c.x, typeof c.hi, c instanceof P];
// === structuredClone of an Error
const c = structuredClone(new RangeError("bad")); return [c instanceof RangeError, c.message, c.name];
// === structuredClone of primitives
return [structuredClone(1), structuredClone("s"), structuredClone(null), structuredClone(true)];
// === isWellFormed
return ["abc".isWellFormed(), "a\uD800".isWellFormed(), "\uDC00b".isWellFormed(), "😀".isWellFormed()];
// === toWellFormed
return ["a\uD800b".toWellFormed() === "a\uFFFDb", "ok".toWellFormed(), "😀".toWellFormed() === "😀"];
// === performance.now is a small positive number
const t = performance.now(); return typeof t === "number" && t >= 0 && t < 60000;
// === performance.now grows
const a = performance.now(); let x = 0; for (let i = 0; i < 1e5; i++) x += i; return performance.now() >= a;
// === fetch rejects
try { await fetch("https://example.com/"); return "fetched" } catch (e) { return e.name + ": " + e.message }
// === URL components
const u = new URL("https://user:pw@example.com:8443/a/b?x=1&y=two#frag");
return [u.href, u.origin, u.protocol, u.username, u.password, u.host, u.hostname, u.port, u.pathname, u.search, u.hash];
// === URL with a base
return new URL("../c?d=1", "https://example.com/a/b/").href;
// === URL default port is dropped
return [new URL("https://example.com:443/").href, new URL("http://example.com:80/x").port];
// === URL normalizes
return [new URL("HTTPS://EXAMPLE.com/a/./b/../c").href, new URL("https://example.com/a b").pathname];
// === invalid URL throws
new URL("not a url");
// === URL.canParse
return [URL.canParse("https://x.y/"), URL.canParse("nope"), URL.canParse("/p", "https://x.y")];
// === URL searchParams build a query
const u = new URL("https://api.example.com/search"); u.searchParams.set("q", "tea & coffee"); u.searchParams.append("page", "2");
return [u.href, u.search];
// === URL searchParams read
const u = new URL("https://x.y/?a=1&b=2&a=3"); return [u.searchParams.get("a"), u.searchParams.getAll("a"), u.searchParams.get("zz"), u.searchParams.has("b")];
// === URL setters
const u = new URL("https://x.y/p"); u.pathname = "/q r"; u.hash = "h"; u.search = "?k=v"; u.hostname = "z.example"; return [u.href, u.searchParams.get("k")];
// === URL toString and JSON
const u = new URL("https://x.y/p?a=1"); return [String(u), JSON.stringify({ u })];
// === URL instanceof and searchParams type
const u = new URL("https://x.y/"); return [u instanceof URL, u.searchParams instanceof URLSearchParams];
// === URLSearchParams from a string
const p = new URLSearchParams("?a=1&b=hello+world&c=%E2%82%AC&d"); return [p.get("a"), p.get("b"), p.get("c"), p.get("d"), p.toString()];
// === URLSearchParams from an object
return new URLSearchParams({ q: "a b/c", n: 5, ok: true }).toString();
// === URLSearchParams from pairs
return new URLSearchParams([["a", "1"], ["a", "2"]]).getAll("a");
// === URLSearchParams encoding
return new URLSearchParams({ s: "~!@#$%^&*()_+-=[]{}|;':\",./<>? é" }).toString();
// === URLSearchParams delete and has with value
const p = new URLSearchParams("a=1&a=2&b=3"); p.delete("a", "1"); return [p.toString(), p.has("a", "2"), p.has("a", "1")];
// === URLSearchParams sort
const p = new URLSearchParams("c=3&a=1&b=2&a=0"); p.sort(); return p.toString();
// === URLSearchParams iterate
const p = new URLSearchParams("a=1&b=2"); const out = []; for (const [k, v] of p) out.push(k + v); p.forEach((v, k) => out.push(v + k)); return [out, [...p.keys()], [...p.values()], p.size];
// === URLSearchParams to an object
return Object.fromEntries(new URLSearchParams("x=1&y=2"));
// === URLSearchParams set replaces the first and drops the rest
const p = new URLSearchParams("a=1&b=2&a=3"); p.set("a", "9"); return p.toString();
