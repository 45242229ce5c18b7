// === toLocaleString en-US
return [(1234567.891).toLocaleString("en-US"), (1234567.891).toLocaleString(), (0).toLocaleString("en-US"), (-1234.5).toLocaleString("en-US")];
// === toLocaleString rounds to three fraction digits
return [(1.23456).toLocaleString("en-US"), (2.0005).toLocaleString("en-US"), (0.0001).toLocaleString("en-US"), (999.9999).toLocaleString("en-US")];
// === toLocaleString with fraction digits
return [(1234.5).toLocaleString("en-US", { minimumFractionDigits: 2 }), (1.005).toLocaleString("en-US", { maximumFractionDigits: 2 }), (3).toLocaleString("en-US", { minimumFractionDigits: 1, maximumFractionDigits: 1 })];
// === currency USD EUR GBP JPY
const f = (c) => new Intl.NumberFormat("en-US", { style: "currency", currency: c }).format(1234.567);
return [f("USD"), f("EUR"), f("GBP"), f("JPY")];
// === negative currency
return new Intl.NumberFormat("en-US", { style: "currency", currency: "USD" }).format(-5.5);
// === percent
const p = new Intl.NumberFormat("en-US", { style: "percent" }); return [p.format(0.256), p.format(1), p.format(-0.5), new Intl.NumberFormat("en-US", { style: "percent", maximumFractionDigits: 1 }).format(0.12345)];
// === no grouping
return new Intl.NumberFormat("en-US", { useGrouping: false }).format(1234567.5);
// === big and small numbers
return [(1e21).toLocaleString("en-US"), (123456789012).toLocaleString("en-US"), (0.5).toLocaleString("en-US", { maximumFractionDigits: 0 }), (1.5).toLocaleString("en-US", { maximumFractionDigits: 0 }), (2.5).toLocaleString("en-US", { maximumFractionDigits: 0 })];
// === NaN and Infinity
return [NaN.toLocaleString("en-US"), Infinity.toLocaleString("en-US"), (-Infinity).toLocaleString("en-US")];
// === currency without a code throws
new Intl.NumberFormat("en-US", { style: "currency" });
// === bad fraction digits throw
(1).toLocaleString("en-US", { maximumFractionDigits: 101 });
// === resolvedOptions
const o = new Intl.NumberFormat("en-US", { style: "currency", currency: "EUR" }).resolvedOptions(); return [o.locale, o.style, o.currency, o.minimumFractionDigits, o.maximumFractionDigits];
// === a report line
const total = 15234.5; return `Total: ${total.toLocaleString("en-US", { style: "currency", currency: "USD" })} (${(0.0725).toLocaleString("en-US", { style: "percent", minimumFractionDigits: 1 })} tax)`;
// === typeof Intl
return [typeof Intl, typeof Intl.NumberFormat];
// === date defaults in UTC
const d = new Date(Date.UTC(2025, 0, 15, 9, 5, 7)); const o = { timeZone: "UTC" };
return [d.toLocaleDateString("en-US", o), d.toLocaleTimeString("en-US", o), d.toLocaleString("en-US", o)];
// === date with weekday and short month
return new Date(Date.UTC(2025, 0, 15)).toLocaleDateString("en-US", { weekday: "short", year: "numeric", month: "short", day: "numeric", timeZone: "UTC" });
// === date long month and day
const d = new Date(Date.UTC(2024, 6, 4)); const o = { timeZone: "UTC" };
return [d.toLocaleDateString("en-US", { ...o, month: "long", day: "numeric" }), d.toLocaleDateString("en-US", { ...o, month: "long", year: "numeric" }), d.toLocaleDateString("en-US", { ...o, weekday: "long" })];
// === date 2-digit fields
return new Date(Date.UTC(2025, 2, 5)).toLocaleDateString("en-US", { year: "2-digit", month: "2-digit", day: "2-digit", timeZone: "UTC" });
// === time fields
const d = new Date(Date.UTC(2025, 0, 15, 14, 3)); const o = { timeZone: "UTC" };
return [d.toLocaleTimeString("en-US", { ...o, hour: "2-digit", minute: "2-digit" }), d.toLocaleTimeString("en-US", { ...o, hour: "numeric", minute: "2-digit" }), d.toLocaleTimeString("en-US", { ...o, hour12: false })];
// === dateStyle and timeStyle
const d = new Date(Date.UTC(2025, 0, 15, 9, 5)); const f = (ds, ts) => new Intl.DateTimeFormat("en-US", { dateStyle: ds, timeStyle: ts, timeZone: "UTC" }).format(d);
return [f("full"), f("long"), f("medium"), f("short"), f("medium", "short"), f("long", "short"), f(undefined, "medium")];
// === time zones by name
const d = new Date(Date.UTC(2025, 0, 15, 12, 0));
return ["America/New_York", "Europe/Berlin", "Asia/Tokyo", "Asia/Kolkata", "America/Los_Angeles"].map(tz => d.toLocaleString("en-US", { timeZone: tz, timeZoneName: "short" }));
// === summer time
return new Date(Date.UTC(2025, 6, 1, 12)).toLocaleTimeString("en-US", { timeZone: "America/New_York", timeZoneName: "short" });
// === a bad time zone throws
new Date(0).toLocaleString("en-US", { timeZone: "Mars/Olympus" });
// === Intl.DateTimeFormat default
return new Intl.DateTimeFormat("en-US", { timeZone: "UTC" }).format(new Date(Date.UTC(2025, 11, 31, 23, 59)));
// === midnight and noon
const o = { timeZone: "UTC", hour: "numeric", minute: "2-digit" }; return [new Date(Date.UTC(2025, 0, 1, 0, 0)).toLocaleTimeString("en-US", o), new Date(Date.UTC(2025, 0, 1, 12, 0)).toLocaleTimeString("en-US", o)];
// === Invalid Date
return new Date(NaN).toLocaleDateString("en-US");
// === numbers in eleven locales
return ["en-US", "en-GB", "de-DE", "fr-FR", "es-ES", "it-IT", "pt-BR", "ja-JP", "zh-CN", "ko-KR", "ru-RU", "hi-IN", "nl-NL"].map(l => [(1234567.891).toLocaleString(l), (1234.5).toLocaleString(l), (12.5).toLocaleString(l)]);
// === percents in eleven locales
return ["en-US", "en-GB", "de-DE", "fr-FR", "es-ES", "it-IT", "pt-BR", "ja-JP", "zh-CN", "ko-KR", "ru-RU", "hi-IN", "nl-NL"].map(l => new Intl.NumberFormat(l, { style: "percent" }).format(-0.256));
// === currencies in eleven locales
return ["en-US", "en-GB", "de-DE", "fr-FR", "es-ES", "it-IT", "pt-BR", "ja-JP", "zh-CN", "ko-KR", "ru-RU", "hi-IN", "nl-NL"].map(l => ["USD", "EUR", "GBP", "JPY", "CHF"].map(c => new Intl.NumberFormat(l, { style: "currency", currency: c }).format(-1234.5)));
// === bare languages and unknown locales
return [(1234.5).toLocaleString("de"), (1234.5).toLocaleString("fr"), (1234.5).toLocaleString(["xx-YY", "de-AT"]) !== undefined, (1234.5).toLocaleString("zz")];
// === Indian grouping
return [(123456789).toLocaleString("hi-IN"), (1000).toLocaleString("hi-IN"), (100000).toLocaleString("en-IN")];
// === grouping from five digits in es-ES
return [(1234).toLocaleString("es-ES"), (12345).toLocaleString("es-ES"), (1234).toLocaleString("it-IT")];
// === PluralRules cardinal
const p = new Intl.PluralRules("en-US"); return [0, 1, 2, 1.5, -1].map(n => p.select(n));
// === PluralRules ordinal suffixes
const p = new Intl.PluralRules("en-US", { type: "ordinal" }); const suf = { one: "st", two: "nd", few: "rd", other: "th" };
return [1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 101, 111].map(n => n + suf[p.select(n)]);
// === ListFormat
const f = (o) => new Intl.ListFormat("en", o).format(["a", "b", "c"]);
return [f(), f({ type: "disjunction" }), f({ style: "short" }), f({ style: "narrow" }), f({ type: "unit" }), f({ type: "unit", style: "narrow" }), new Intl.ListFormat("en").format(["x", "y"]), new Intl.ListFormat("en").format(["x"])];
// === RelativeTimeFormat
const r = new Intl.RelativeTimeFormat("en"); return [r.format(-1, "day"), r.format(2, "hours"), r.format(-3, "month"), r.format(1, "year"), r.format(0, "second"), r.format(-1.5, "week")];
// === RelativeTimeFormat auto
const r = new Intl.RelativeTimeFormat("en", { numeric: "auto" }); return [r.format(-1, "day"), r.format(1, "day"), r.format(0, "day"), r.format(-2, "day"), r.format(1, "week"), r.format(0, "second")];
// === RelativeTimeFormat short
const r = new Intl.RelativeTimeFormat("en", { style: "short" }); return [r.format(-3, "day"), r.format(2, "hour"), r.format(-5, "minute"), r.format(1, "month")];
// === RelativeTimeFormat bad unit
new Intl.RelativeTimeFormat("en").format(1, "fortnight");
// === localeCompare numeric
return ["item10", "item2", "item1"].sort((a, b) => a.localeCompare(b, undefined, { numeric: true }));
// === localeCompare sensitivity base
return ["a".localeCompare("A", "en", { sensitivity: "base" }), "a".localeCompare("á", "en", { sensitivity: "base" }), "a".localeCompare("b", "en", { sensitivity: "base" }), "a".localeCompare("A", "en", { sensitivity: "accent" }), "a".localeCompare("á", "en", { sensitivity: "accent" })];
// === localeCompare default order
return ["b", "a", "C", "á", "A"].sort((x, y) => x.localeCompare(y));
// === Intl.Collator compare in sort
const c = new Intl.Collator("en", { numeric: true, sensitivity: "base" }); return [["v10", "v9", "V1"].sort(c.compare), c.compare("Résumé", "resume")];
