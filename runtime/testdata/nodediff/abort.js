// === AbortController aborts its signal
const c = new AbortController(); const before = c.signal.aborted; c.abort(); return [before, c.signal.aborted, c.signal.reason.name];
// === abort with a reason
const c = new AbortController(); c.abort("stop"); return c.signal.reason;
// === abort listeners and onabort
const c = new AbortController(); const log = []; c.signal.addEventListener("abort", (e) => log.push("listener " + e.type)); c.signal.onabort = () => log.push("onabort"); c.abort(); c.abort(); return log;
// === throwIfAborted
const c = new AbortController(); c.signal.throwIfAborted(); c.abort(new RangeError("r")); try { c.signal.throwIfAborted() } catch (e) { return e.name }
// === AbortSignal.abort
const s = AbortSignal.abort(); return [s.aborted, s.reason.name, s.reason.message];
// === AbortSignal.timeout fires
const s = AbortSignal.timeout(5); await new Promise(r => setTimeout(r, 30)); return [s.aborted, s.reason.name];
// === AbortSignal.timeout races work
const s = AbortSignal.timeout(10);
const work = new Promise((resolve, reject) => { const t = setTimeout(() => resolve("done"), 1000); s.addEventListener("abort", () => { clearTimeout(t); reject(s.reason) }) });
try { return await work } catch (e) { return e.name }
// === AbortSignal.any
const a = new AbortController(), b = new AbortController(); const s = AbortSignal.any([a.signal, b.signal]); b.abort("b"); return [s.aborted, s.reason];
// === AbortSignal constructor is illegal
new AbortSignal();
// === removeEventListener
const c = new AbortController(); let n = 0; const f = () => n++; c.signal.addEventListener("abort", f); c.signal.removeEventListener("abort", f); c.abort(); return n;
// === signal instanceof AbortSignal
return new AbortController().signal instanceof AbortSignal;
