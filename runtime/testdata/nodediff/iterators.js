// === generator filter map toArray
function* g() { for (let i = 0; i < 10; i++) yield i } return g().filter(x => x % 2).map(x => x * 10).toArray();
// === take and drop
function* nat() { let i = 0; while (true) yield i++ } return [nat().take(3).toArray(), nat().drop(5).take(2).toArray()];
// === flatMap
return [1, 2].values().flatMap(x => [x, x * 100]).toArray();
// === reduce with and without initial
return [[1, 2, 3].values().reduce((a, b) => a + b), [1, 2, 3].values().reduce((a, b) => a + b, 10)];
// === reduce of empty without initial
[].values().reduce((a, b) => a + b);
// === some every find
const it = () => [3, 5, 8, 9].values(); return [it().some(x => x % 2 === 0), it().every(x => x > 2), it().find(x => x > 4), it().find(x => x > 100)];
// === forEach with index
const out = []; ["a", "b"].values().forEach((v, i) => out.push(v + i)); return out;
// === map iterator helpers
const m = new Map([["a", 1], ["b", 2]]); return m.entries().map(([k, v]) => k + v).toArray();
// === Iterator.from an iterable
return Iterator.from(new Set([1, 2, 3])).map(x => x * 2).toArray();
// === Iterator.from an iterator object
let i = 0; const it = { next() { return i < 3 ? { value: i++, done: false } : { value: undefined, done: true } } };
return Iterator.from(it).toArray();
// === helpers are lazy
const seen = []; function* g() { for (const x of [1, 2, 3]) { seen.push(x); yield x } }
const h = g().map(x => x * 2); const first = h.next().value; return [first, seen];
// === take closes the source
let closed = false; function* g() { try { yield 1; yield 2; yield 3 } finally { closed = true } }
return [g().take(1).toArray(), closed];
// === negative take throws
[1].values().take(-1);
// === iterator helper on string iterator
return "héllo"[Symbol.iterator]().filter(c => c !== "l").toArray().join("");
// === typeof Iterator
return [typeof Iterator, typeof Iterator.from, typeof [].values().map];
