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
