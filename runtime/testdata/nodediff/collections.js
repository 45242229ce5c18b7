// === array sort is stable
return [{ n: "b", k: 1 }, { n: "a", k: 0 }, { n: "c", k: 1 }, { n: "d", k: 0 }].sort((x, y) => x.k - y.k).map((x) => x.n);
// === array toSorted toReversed with
const a = [3, 1, 2]; return [a.toSorted(), a.toReversed(), a.with(0, 9), a.toSpliced(1, 1), a];
// === array findLast and findLastIndex
return [[1, 2, 3, 4].findLast((x) => x % 2), [1, 2, 3, 4].findLastIndex((x) => x > 5)];
// === array flat and flatMap
return [[1, [2, [3, [4]]]].flat(2), ["a b", "c"].flatMap((s) => s.split(" "))];
// === array from with a map
return [Array.from({ length: 4 }, (_, i) => i * i), Array.from("héllo"), Array.from(new Set([1, 1, 2]))];
// === array reduce grouping
return ["apple", "avocado", "banana"].reduce((acc, w) => { (acc[w[0]] ??= []).push(w); return acc; }, {});
// === groupBy with odd and even keys
const g = Object.groupBy([1, 2, 3, 4, 5], (n) => (n % 2 ? "odd" : "even")); const m = Map.groupBy([1, 2, 3], (n) => n > 1); return [g, [...m.entries()]];
// === array includes NaN and indexOf
return [[NaN].includes(NaN), [NaN].indexOf(NaN), [1, 2, 3].at(-1), [0, -0].includes(-0)];
// === array copyWithin and fill
return [[1, 2, 3, 4, 5].copyWithin(0, 3), new Array(3).fill(7), [1, 2, 3].fill(0, 1)];
// === array sort of numbers as strings
return [[10, 9, 1, 100].sort(), [10, 9, 1, 100].sort((a, b) => a - b), ["b", "a", "C"].sort()];
// === array holes
const a = [1, , 3]; return [a.length, 1 in a, a.map((x) => x * 2), Object.keys(a), JSON.stringify(a)];
// === array every some and entries
return [[2, 4].every((x) => x % 2 === 0), [].some(() => true), [...["a", "b"].entries()], [...[7, 8].keys()]];
// === map basics and order
const m = new Map([["b", 2], ["a", 1]]); m.set("c", 3); m.delete("b"); return [[...m], m.size, m.get("a"), m.has("b")];
// === map with object keys
const k = {}; const m = new Map([[k, "obj"], [NaN, "nan"]]); return [m.get(k), m.get(NaN), m.get({})];
// === set operations by hand
const a = new Set([1, 2, 3]), b = new Set([2, 3, 4]); return [[...a].filter((x) => b.has(x)), [...new Set([...a, ...b])], [...a].filter((x) => !b.has(x))];
// === set methods of ES2025
const a = new Set([1, 2, 3]), b = new Set([2, 3, 4]); return [[...a.union(b)], [...a.intersection(b)], [...a.difference(b)], [...a.symmetricDifference(b)], a.isSubsetOf(new Set([1, 2, 3, 4]))];
// === Object.fromEntries and entries
return [Object.fromEntries([["a", 1], ["b", 2]]), Object.entries({ x: 1, y: [2] }), Object.fromEntries(new Map([["k", "v"]]))];
// === object key order
return Object.keys({ b: 1, 2: 0, a: 2, 1: 0, "-1": 0 });
// === object spread and rest
const { a, ...rest } = { a: 1, b: 2, c: 3 }; return [a, rest, { ...rest, b: 9 }];
// === optional chaining on nested nulls
const o = { a: { b: null } }; return [o?.a?.b?.c, o.x?.y, o.a.b ?? "default", 0 ?? 1, 0 || 1];
// === structuredClone of a map inside an object
const v = structuredClone({ m: new Map([["a", new Set([1])]]), d: new Date(0) }); return [v.m.get("a").has(1), v.d.toISOString()];
// === WeakMap basics
const wm = new WeakMap(); const k = {}; wm.set(k, 1); return [wm.get(k), wm.has({}), wm.delete(k), wm.has(k)];
// === typed arrays
const t = new Uint8Array([255, 256, -1]); const f = Float64Array.from([1.5, 2.5]); return [Array.from(t), Array.from(f.map((x) => x * 2)), new Int16Array(2).length];
// === DataView
const dv = new DataView(new ArrayBuffer(4)); dv.setUint16(0, 0x1234); return [dv.getUint8(0), dv.getUint8(1), dv.getUint16(0, true)];
// === array destructuring with defaults
const [x = 1, , z = 3, ...rest] = [undefined, 2, null, 4, 5]; return [x, z, rest];
