// === regexp named groups for a date
const m = "2025-03-09".match(/(?<y>\d{4})-(?<m>\d{2})-(?<d>\d{2})/); return [m.groups.y, m.groups.m, m.groups.d, m.index];
// === regexp matchAll with indices
return [..."a1b22c333".matchAll(/\d+/g)].map((m) => [m[0], m.index]);
// === regexp sticky flag
const re = /foo/y; re.lastIndex = 3; return [re.test("barfoo"), re.lastIndex, re.test("barfoo")];
// === regexp lookbehind
return ["$10 €20 $30".match(/(?<=\$)\d+/g), "price: 42".replace(/(?<!\d)(\d+)/, "[$1]")];
// === regexp replace with a function
return "john smith".replace(/\b\w/g, (c) => c.toUpperCase());
// === regexp split with captures
return ["a1b2c3".split(/(\d)/), "one, two,three".split(/\s*,\s*/)];
// === regexp dotAll and multiline
return [/a.b/s.test("a\nb"), /a.b/.test("a\nb"), "x\ny\nz".match(/^\w$/gm)];
// === regexp unicode property escapes
return ["héllo wörld 123".match(/\p{L}+/gu), /\p{Lu}/u.test("é"), /^\p{Script=Greek}+$/u.test("αβγ")];
// === regexp hasIndices
const m = /b(c)/d.exec("abcd"); return [m.indices[0], m.indices[1]];
// === regexp escapes and classes
return [/\bword\b/.test("a word here"), "a\tb  c".split(/\s+/), /^[\w.+-]+@[\w-]+\.[\w.]+$/.test("me+x@ex-ample.co.uk")];
// === regexp source and flags
const re = /a\/b[c]/gi; return [re.source, re.flags, String(re), re.global, re.ignoreCase];
// === regexp exec loop
const re = /(\w)=(\d)/g; const out = []; let m; while ((m = re.exec("a=1, b=2, c=3")) !== null) out.push(m[1] + m[2]); return out;
// === regexp replace patterns
return ["John Smith".replace(/(\w+)\s(\w+)/, "$2, $1"), "abc".replace("b", "[$&]"), "abc".replace(/b/, "$`$'")];
// === regexp v flag set subtraction
const re = /[\p{L}--[a-z]]/v; return [re.test("A"), re.test("a"), re.test("é"), re.unicodeSets, re.flags];
// === regexp v flag intersection
return ["aXbYc1".replace(/[[A-Z]&&[X-Z]]/gv, "-"), /^[\p{Script=Greek}&&\p{Letter}]+$/v.test("αβγ"), /[\p{ASCII}&&\d]/v.test("٣")];
// === regexp v flag strings
return [/^[\q{abc|xy}z]$/v.test("abc"), /^[\q{abc|xy}z]$/v.test("xy"), /^[\q{abc|xy}z]$/v.test("z"), "abcz".match(/[\q{abc}a]/gv)];
// === regexp v flag nested and negated classes
return [/^[[a-z]--[aeiou]]+$/v.test("rhythm"), /^[^[a-z]--[aeiou]]+$/v.test("aei"), /[\w--\d]/v.test("5")];
// === regexp v flag with u is an error
new RegExp("a", "uv");
// === regexp v flag needs escaped punctuators
new RegExp("[(]", "v");
