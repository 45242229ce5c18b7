// === dates in en-US: defaults and styles
const d = new Date(Date.UTC(2025, 2, 9, 17, 5, 7)); const o = { timeZone: "UTC" };
return [d.toLocaleString("en-US", o), d.toLocaleDateString("en-US", o), d.toLocaleTimeString("en-US", o),
  ...["full", "long", "medium", "short"].map((s) => d.toLocaleDateString("en-US", { ...o, dateStyle: s })),
  ...["full", "long", "medium", "short"].map((s) => d.toLocaleTimeString("en-US", { ...o, timeStyle: s })),
  d.toLocaleString("en-US", { ...o, dateStyle: "medium", timeStyle: "short" }), d.toLocaleString("en-US", { ...o, dateStyle: "long", timeStyle: "short", hour12: false })];
// === dates in en-US: the fields agents pick
const d = new Date(Date.UTC(2024, 10, 28, 8, 30, 0)); const f = (x) => d.toLocaleString("en-US", { timeZone: "Europe/Berlin", ...x });
return [f({ weekday: "short", month: "short", day: "numeric" }), f({ year: "numeric", month: "long" }), f({ month: "2-digit", day: "2-digit", year: "numeric" }),
  f({ weekday: "long", year: "numeric", month: "long", day: "numeric" }), f({ hour: "2-digit", minute: "2-digit" }), f({ hour: "numeric", minute: "2-digit", hour12: true }),
  f({ month: "short", day: "numeric", hour: "numeric", minute: "2-digit" }), f({ weekday: "short", hour: "numeric" }), f({ year: "2-digit", month: "narrow" }),
  f({ hour: "numeric", minute: "2-digit", timeZoneName: "short" }), f({ timeZoneName: "long" })];
// === Intl.DateTimeFormat in en-US: formatToParts and time zones
const d = new Date(Date.UTC(2025, 6, 4, 23, 45, 1));
const parts = new Intl.DateTimeFormat("en-US", { timeZone: "America/New_York", dateStyle: "medium", timeStyle: "long" }).formatToParts(d);
const zones = ["America/Los_Angeles", "Asia/Tokyo", "Asia/Kolkata", "Australia/Sydney", "Europe/London", "America/Sao_Paulo"].map((tz) => new Intl.DateTimeFormat("en-US", { timeZone: tz, hour: "numeric", minute: "numeric", timeZoneName: "short" }).format(d));
const ro = new Intl.DateTimeFormat("en-US", { timeZone: "Asia/Tokyo", hour: "numeric" }).resolvedOptions();
return [parts, zones, ro.locale, ro.timeZone, ro.hourCycle];
// === plurals, lists and relative times in en-US
const pr = new Intl.PluralRules("en-US"); const po = new Intl.PluralRules("en-US", { type: "ordinal" });
const ns = [0, 1, 2, 3, 4, 5, 11, 12, 21, 22, 23, 101, 111, 1000000, 1.5, 0.5, 2.25];
const lists = [["conjunction", "long"], ["conjunction", "short"], ["disjunction", "long"], ["unit", "narrow"]].map(([type, style]) => new Intl.ListFormat("en-US", { type, style }).format(["alpha", "beta", "gamma", "delta"]));
const two = new Intl.ListFormat("en-US").format(["Ann", "Ian"]);
const rt = new Intl.RelativeTimeFormat("en-US", { numeric: "auto" }); const rs = new Intl.RelativeTimeFormat("en-US", { style: "short" });
return [ns.map((n) => pr.select(n)), ns.map((n) => po.select(n)), lists, two,
  [-2, -1, 0, 1, 2, 5].map((n) => rt.format(n, "day")), [-3, 1, 1.5, 21].map((n) => rs.format(n, "hours")), rt.format(-1, "week"), rt.format(3, "month"), rs.format(-1000, "year")];
// === dates in en-GB: defaults and styles
const d = new Date(Date.UTC(2025, 2, 9, 17, 5, 7)); const o = { timeZone: "UTC" };
return [d.toLocaleString("en-GB", o), d.toLocaleDateString("en-GB", o), d.toLocaleTimeString("en-GB", o),
  ...["full", "long", "medium", "short"].map((s) => d.toLocaleDateString("en-GB", { ...o, dateStyle: s })),
  ...["full", "long", "medium", "short"].map((s) => d.toLocaleTimeString("en-GB", { ...o, timeStyle: s })),
  d.toLocaleString("en-GB", { ...o, dateStyle: "medium", timeStyle: "short" }), d.toLocaleString("en-GB", { ...o, dateStyle: "long", timeStyle: "short", hour12: false })];
// === dates in en-GB: the fields agents pick
const d = new Date(Date.UTC(2024, 10, 28, 8, 30, 0)); const f = (x) => d.toLocaleString("en-GB", { timeZone: "Europe/Berlin", ...x });
return [f({ weekday: "short", month: "short", day: "numeric" }), f({ year: "numeric", month: "long" }), f({ month: "2-digit", day: "2-digit", year: "numeric" }),
  f({ weekday: "long", year: "numeric", month: "long", day: "numeric" }), f({ hour: "2-digit", minute: "2-digit" }), f({ hour: "numeric", minute: "2-digit", hour12: true }),
  f({ month: "short", day: "numeric", hour: "numeric", minute: "2-digit" }), f({ weekday: "short", hour: "numeric" }), f({ year: "2-digit", month: "narrow" }),
  f({ hour: "numeric", minute: "2-digit", timeZoneName: "short" }), f({ timeZoneName: "long" })];
// === Intl.DateTimeFormat in en-GB: formatToParts and time zones
const d = new Date(Date.UTC(2025, 6, 4, 23, 45, 1));
const parts = new Intl.DateTimeFormat("en-GB", { timeZone: "America/New_York", dateStyle: "medium", timeStyle: "long" }).formatToParts(d);
const zones = ["America/Los_Angeles", "Asia/Tokyo", "Asia/Kolkata", "Australia/Sydney", "Europe/London", "America/Sao_Paulo"].map((tz) => new Intl.DateTimeFormat("en-GB", { timeZone: tz, hour: "numeric", minute: "numeric", timeZoneName: "short" }).format(d));
const ro = new Intl.DateTimeFormat("en-GB", { timeZone: "Asia/Tokyo", hour: "numeric" }).resolvedOptions();
return [parts, zones, ro.locale, ro.timeZone, ro.hourCycle];
// === plurals, lists and relative times in en-GB
const pr = new Intl.PluralRules("en-GB"); const po = new Intl.PluralRules("en-GB", { type: "ordinal" });
const ns = [0, 1, 2, 3, 4, 5, 11, 12, 21, 22, 23, 101, 111, 1000000, 1.5, 0.5, 2.25];
const lists = [["conjunction", "long"], ["conjunction", "short"], ["disjunction", "long"], ["unit", "narrow"]].map(([type, style]) => new Intl.ListFormat("en-GB", { type, style }).format(["alpha", "beta", "gamma", "delta"]));
const two = new Intl.ListFormat("en-GB").format(["Ann", "Ian"]);
const rt = new Intl.RelativeTimeFormat("en-GB", { numeric: "auto" }); const rs = new Intl.RelativeTimeFormat("en-GB", { style: "short" });
return [ns.map((n) => pr.select(n)), ns.map((n) => po.select(n)), lists, two,
  [-2, -1, 0, 1, 2, 5].map((n) => rt.format(n, "day")), [-3, 1, 1.5, 21].map((n) => rs.format(n, "hours")), rt.format(-1, "week"), rt.format(3, "month"), rs.format(-1000, "year")];
// === dates in en-IN: defaults and styles
const d = new Date(Date.UTC(2025, 2, 9, 17, 5, 7)); const o = { timeZone: "UTC" };
return [d.toLocaleString("en-IN", o), d.toLocaleDateString("en-IN", o), d.toLocaleTimeString("en-IN", o),
  ...["full", "long", "medium", "short"].map((s) => d.toLocaleDateString("en-IN", { ...o, dateStyle: s })),
  ...["full", "long", "medium", "short"].map((s) => d.toLocaleTimeString("en-IN", { ...o, timeStyle: s })),
  d.toLocaleString("en-IN", { ...o, dateStyle: "medium", timeStyle: "short" }), d.toLocaleString("en-IN", { ...o, dateStyle: "long", timeStyle: "short", hour12: false })];
// === dates in en-IN: the fields agents pick
const d = new Date(Date.UTC(2024, 10, 28, 8, 30, 0)); const f = (x) => d.toLocaleString("en-IN", { timeZone: "Europe/Berlin", ...x });
return [f({ weekday: "short", month: "short", day: "numeric" }), f({ year: "numeric", month: "long" }), f({ month: "2-digit", day: "2-digit", year: "numeric" }),
  f({ weekday: "long", year: "numeric", month: "long", day: "numeric" }), f({ hour: "2-digit", minute: "2-digit" }), f({ hour: "numeric", minute: "2-digit", hour12: true }),
  f({ month: "short", day: "numeric", hour: "numeric", minute: "2-digit" }), f({ weekday: "short", hour: "numeric" }), f({ year: "2-digit", month: "narrow" }),
  f({ hour: "numeric", minute: "2-digit", timeZoneName: "short" }), f({ timeZoneName: "long" })];
// === Intl.DateTimeFormat in en-IN: formatToParts and time zones
const d = new Date(Date.UTC(2025, 6, 4, 23, 45, 1));
const parts = new Intl.DateTimeFormat("en-IN", { timeZone: "America/New_York", dateStyle: "medium", timeStyle: "long" }).formatToParts(d);
const zones = ["America/Los_Angeles", "Asia/Tokyo", "Asia/Kolkata", "Australia/Sydney", "Europe/London", "America/Sao_Paulo"].map((tz) => new Intl.DateTimeFormat("en-IN", { timeZone: tz, hour: "numeric", minute: "numeric", timeZoneName: "short" }).format(d));
const ro = new Intl.DateTimeFormat("en-IN", { timeZone: "Asia/Tokyo", hour: "numeric" }).resolvedOptions();
return [parts, zones, ro.locale, ro.timeZone, ro.hourCycle];
// === plurals, lists and relative times in en-IN
const pr = new Intl.PluralRules("en-IN"); const po = new Intl.PluralRules("en-IN", { type: "ordinal" });
const ns = [0, 1, 2, 3, 4, 5, 11, 12, 21, 22, 23, 101, 111, 1000000, 1.5, 0.5, 2.25];
const lists = [["conjunction", "long"], ["conjunction", "short"], ["disjunction", "long"], ["unit", "narrow"]].map(([type, style]) => new Intl.ListFormat("en-IN", { type, style }).format(["alpha", "beta", "gamma", "delta"]));
const two = new Intl.ListFormat("en-IN").format(["Ann", "Ian"]);
const rt = new Intl.RelativeTimeFormat("en-IN", { numeric: "auto" }); const rs = new Intl.RelativeTimeFormat("en-IN", { style: "short" });
return [ns.map((n) => pr.select(n)), ns.map((n) => po.select(n)), lists, two,
  [-2, -1, 0, 1, 2, 5].map((n) => rt.format(n, "day")), [-3, 1, 1.5, 21].map((n) => rs.format(n, "hours")), rt.format(-1, "week"), rt.format(3, "month"), rs.format(-1000, "year")];
// === dates in de-DE: defaults and styles
const d = new Date(Date.UTC(2025, 2, 9, 17, 5, 7)); const o = { timeZone: "UTC" };
return [d.toLocaleString("de-DE", o), d.toLocaleDateString("de-DE", o), d.toLocaleTimeString("de-DE", o),
  ...["full", "long", "medium", "short"].map((s) => d.toLocaleDateString("de-DE", { ...o, dateStyle: s })),
  ...["full", "long", "medium", "short"].map((s) => d.toLocaleTimeString("de-DE", { ...o, timeStyle: s })),
  d.toLocaleString("de-DE", { ...o, dateStyle: "medium", timeStyle: "short" }), d.toLocaleString("de-DE", { ...o, dateStyle: "long", timeStyle: "short", hour12: false })];
// === dates in de-DE: the fields agents pick
const d = new Date(Date.UTC(2024, 10, 28, 8, 30, 0)); const f = (x) => d.toLocaleString("de-DE", { timeZone: "Europe/Berlin", ...x });
return [f({ weekday: "short", month: "short", day: "numeric" }), f({ year: "numeric", month: "long" }), f({ month: "2-digit", day: "2-digit", year: "numeric" }),
  f({ weekday: "long", year: "numeric", month: "long", day: "numeric" }), f({ hour: "2-digit", minute: "2-digit" }), f({ hour: "numeric", minute: "2-digit", hour12: true }),
  f({ month: "short", day: "numeric", hour: "numeric", minute: "2-digit" }), f({ weekday: "short", hour: "numeric" }), f({ year: "2-digit", month: "narrow" }),
  f({ hour: "numeric", minute: "2-digit", timeZoneName: "short" }), f({ timeZoneName: "long" })];
// === Intl.DateTimeFormat in de-DE: formatToParts and time zones
const d = new Date(Date.UTC(2025, 6, 4, 23, 45, 1));
const parts = new Intl.DateTimeFormat("de-DE", { timeZone: "America/New_York", dateStyle: "medium", timeStyle: "long" }).formatToParts(d);
const zones = ["America/Los_Angeles", "Asia/Tokyo", "Asia/Kolkata", "Australia/Sydney", "Europe/London", "America/Sao_Paulo"].map((tz) => new Intl.DateTimeFormat("de-DE", { timeZone: tz, hour: "numeric", minute: "numeric", timeZoneName: "short" }).format(d));
const ro = new Intl.DateTimeFormat("de-DE", { timeZone: "Asia/Tokyo", hour: "numeric" }).resolvedOptions();
return [parts, zones, ro.locale, ro.timeZone, ro.hourCycle];
// === plurals, lists and relative times in de-DE
const pr = new Intl.PluralRules("de-DE"); const po = new Intl.PluralRules("de-DE", { type: "ordinal" });
const ns = [0, 1, 2, 3, 4, 5, 11, 12, 21, 22, 23, 101, 111, 1000000, 1.5, 0.5, 2.25];
const lists = [["conjunction", "long"], ["conjunction", "short"], ["disjunction", "long"], ["unit", "narrow"]].map(([type, style]) => new Intl.ListFormat("de-DE", { type, style }).format(["alpha", "beta", "gamma", "delta"]));
const two = new Intl.ListFormat("de-DE").format(["Ann", "Ian"]);
const rt = new Intl.RelativeTimeFormat("de-DE", { numeric: "auto" }); const rs = new Intl.RelativeTimeFormat("de-DE", { style: "short" });
return [ns.map((n) => pr.select(n)), ns.map((n) => po.select(n)), lists, two,
  [-2, -1, 0, 1, 2, 5].map((n) => rt.format(n, "day")), [-3, 1, 1.5, 21].map((n) => rs.format(n, "hours")), rt.format(-1, "week"), rt.format(3, "month"), rs.format(-1000, "year")];
// === dates in fr-FR: defaults and styles
const d = new Date(Date.UTC(2025, 2, 9, 17, 5, 7)); const o = { timeZone: "UTC" };
return [d.toLocaleString("fr-FR", o), d.toLocaleDateString("fr-FR", o), d.toLocaleTimeString("fr-FR", o),
  ...["full", "long", "medium", "short"].map((s) => d.toLocaleDateString("fr-FR", { ...o, dateStyle: s })),
  ...["full", "long", "medium", "short"].map((s) => d.toLocaleTimeString("fr-FR", { ...o, timeStyle: s })),
  d.toLocaleString("fr-FR", { ...o, dateStyle: "medium", timeStyle: "short" }), d.toLocaleString("fr-FR", { ...o, dateStyle: "long", timeStyle: "short", hour12: false })];
// === dates in fr-FR: the fields agents pick
const d = new Date(Date.UTC(2024, 10, 28, 8, 30, 0)); const f = (x) => d.toLocaleString("fr-FR", { timeZone: "Europe/Berlin", ...x });
return [f({ weekday: "short", month: "short", day: "numeric" }), f({ year: "numeric", month: "long" }), f({ month: "2-digit", day: "2-digit", year: "numeric" }),
  f({ weekday: "long", year: "numeric", month: "long", day: "numeric" }), f({ hour: "2-digit", minute: "2-digit" }), f({ hour: "numeric", minute: "2-digit", hour12: true }),
  f({ month: "short", day: "numeric", hour: "numeric", minute: "2-digit" }), f({ weekday: "short", hour: "numeric" }), f({ year: "2-digit", month: "narrow" }),
  f({ hour: "numeric", minute: "2-digit", timeZoneName: "short" }), f({ timeZoneName: "long" })];
// === Intl.DateTimeFormat in fr-FR: formatToParts and time zones
const d = new Date(Date.UTC(2025, 6, 4, 23, 45, 1));
const parts = new Intl.DateTimeFormat("fr-FR", { timeZone: "America/New_York", dateStyle: "medium", timeStyle: "long" }).formatToParts(d);
const zones = ["America/Los_Angeles", "Asia/Tokyo", "Asia/Kolkata", "Australia/Sydney", "Europe/London", "America/Sao_Paulo"].map((tz) => new Intl.DateTimeFormat("fr-FR", { timeZone: tz, hour: "numeric", minute: "numeric", timeZoneName: "short" }).format(d));
const ro = new Intl.DateTimeFormat("fr-FR", { timeZone: "Asia/Tokyo", hour: "numeric" }).resolvedOptions();
return [parts, zones, ro.locale, ro.timeZone, ro.hourCycle];
// === plurals, lists and relative times in fr-FR
const pr = new Intl.PluralRules("fr-FR"); const po = new Intl.PluralRules("fr-FR", { type: "ordinal" });
const ns = [0, 1, 2, 3, 4, 5, 11, 12, 21, 22, 23, 101, 111, 1000000, 1.5, 0.5, 2.25];
const lists = [["conjunction", "long"], ["conjunction", "short"], ["disjunction", "long"], ["unit", "narrow"]].map(([type, style]) => new Intl.ListFormat("fr-FR", { type, style }).format(["alpha", "beta", "gamma", "delta"]));
const two = new Intl.ListFormat("fr-FR").format(["Ann", "Ian"]);
const rt = new Intl.RelativeTimeFormat("fr-FR", { numeric: "auto" }); const rs = new Intl.RelativeTimeFormat("fr-FR", { style: "short" });
return [ns.map((n) => pr.select(n)), ns.map((n) => po.select(n)), lists, two,
  [-2, -1, 0, 1, 2, 5].map((n) => rt.format(n, "day")), [-3, 1, 1.5, 21].map((n) => rs.format(n, "hours")), rt.format(-1, "week"), rt.format(3, "month"), rs.format(-1000, "year")];
// === dates in es-ES: defaults and styles
const d = new Date(Date.UTC(2025, 2, 9, 17, 5, 7)); const o = { timeZone: "UTC" };
return [d.toLocaleString("es-ES", o), d.toLocaleDateString("es-ES", o), d.toLocaleTimeString("es-ES", o),
  ...["full", "long", "medium", "short"].map((s) => d.toLocaleDateString("es-ES", { ...o, dateStyle: s })),
  ...["full", "long", "medium", "short"].map((s) => d.toLocaleTimeString("es-ES", { ...o, timeStyle: s })),
  d.toLocaleString("es-ES", { ...o, dateStyle: "medium", timeStyle: "short" }), d.toLocaleString("es-ES", { ...o, dateStyle: "long", timeStyle: "short", hour12: false })];
// === dates in es-ES: the fields agents pick
const d = new Date(Date.UTC(2024, 10, 28, 8, 30, 0)); const f = (x) => d.toLocaleString("es-ES", { timeZone: "Europe/Berlin", ...x });
return [f({ weekday: "short", month: "short", day: "numeric" }), f({ year: "numeric", month: "long" }), f({ month: "2-digit", day: "2-digit", year: "numeric" }),
  f({ weekday: "long", year: "numeric", month: "long", day: "numeric" }), f({ hour: "2-digit", minute: "2-digit" }), f({ hour: "numeric", minute: "2-digit", hour12: true }),
  f({ month: "short", day: "numeric", hour: "numeric", minute: "2-digit" }), f({ weekday: "short", hour: "numeric" }), f({ year: "2-digit", month: "narrow" }),
  f({ hour: "numeric", minute: "2-digit", timeZoneName: "short" }), f({ timeZoneName: "long" })];
// === Intl.DateTimeFormat in es-ES: formatToParts and time zones
const d = new Date(Date.UTC(2025, 6, 4, 23, 45, 1));
const parts = new Intl.DateTimeFormat("es-ES", { timeZone: "America/New_York", dateStyle: "medium", timeStyle: "long" }).formatToParts(d);
const zones = ["America/Los_Angeles", "Asia/Tokyo", "Asia/Kolkata", "Australia/Sydney", "Europe/London", "America/Sao_Paulo"].map((tz) => new Intl.DateTimeFormat("es-ES", { timeZone: tz, hour: "numeric", minute: "numeric", timeZoneName: "short" }).format(d));
const ro = new Intl.DateTimeFormat("es-ES", { timeZone: "Asia/Tokyo", hour: "numeric" }).resolvedOptions();
return [parts, zones, ro.locale, ro.timeZone, ro.hourCycle];
// === plurals, lists and relative times in es-ES
const pr = new Intl.PluralRules("es-ES"); const po = new Intl.PluralRules("es-ES", { type: "ordinal" });
const ns = [0, 1, 2, 3, 4, 5, 11, 12, 21, 22, 23, 101, 111, 1000000, 1.5, 0.5, 2.25];
const lists = [["conjunction", "long"], ["conjunction", "short"], ["disjunction", "long"], ["unit", "narrow"]].map(([type, style]) => new Intl.ListFormat("es-ES", { type, style }).format(["alpha", "beta", "gamma", "delta"]));
const two = new Intl.ListFormat("es-ES").format(["Ann", "Ian"]);
const rt = new Intl.RelativeTimeFormat("es-ES", { numeric: "auto" }); const rs = new Intl.RelativeTimeFormat("es-ES", { style: "short" });
return [ns.map((n) => pr.select(n)), ns.map((n) => po.select(n)), lists, two,
  [-2, -1, 0, 1, 2, 5].map((n) => rt.format(n, "day")), [-3, 1, 1.5, 21].map((n) => rs.format(n, "hours")), rt.format(-1, "week"), rt.format(3, "month"), rs.format(-1000, "year")];
// === dates in it-IT: defaults and styles
const d = new Date(Date.UTC(2025, 2, 9, 17, 5, 7)); const o = { timeZone: "UTC" };
return [d.toLocaleString("it-IT", o), d.toLocaleDateString("it-IT", o), d.toLocaleTimeString("it-IT", o),
  ...["full", "long", "medium", "short"].map((s) => d.toLocaleDateString("it-IT", { ...o, dateStyle: s })),
  ...["full", "long", "medium", "short"].map((s) => d.toLocaleTimeString("it-IT", { ...o, timeStyle: s })),
  d.toLocaleString("it-IT", { ...o, dateStyle: "medium", timeStyle: "short" }), d.toLocaleString("it-IT", { ...o, dateStyle: "long", timeStyle: "short", hour12: false })];
// === dates in it-IT: the fields agents pick
const d = new Date(Date.UTC(2024, 10, 28, 8, 30, 0)); const f = (x) => d.toLocaleString("it-IT", { timeZone: "Europe/Berlin", ...x });
return [f({ weekday: "short", month: "short", day: "numeric" }), f({ year: "numeric", month: "long" }), f({ month: "2-digit", day: "2-digit", year: "numeric" }),
  f({ weekday: "long", year: "numeric", month: "long", day: "numeric" }), f({ hour: "2-digit", minute: "2-digit" }), f({ hour: "numeric", minute: "2-digit", hour12: true }),
  f({ month: "short", day: "numeric", hour: "numeric", minute: "2-digit" }), f({ weekday: "short", hour: "numeric" }), f({ year: "2-digit", month: "narrow" }),
  f({ hour: "numeric", minute: "2-digit", timeZoneName: "short" }), f({ timeZoneName: "long" })];
// === Intl.DateTimeFormat in it-IT: formatToParts and time zones
const d = new Date(Date.UTC(2025, 6, 4, 23, 45, 1));
const parts = new Intl.DateTimeFormat("it-IT", { timeZone: "America/New_York", dateStyle: "medium", timeStyle: "long" }).formatToParts(d);
const zones = ["America/Los_Angeles", "Asia/Tokyo", "Asia/Kolkata", "Australia/Sydney", "Europe/London", "America/Sao_Paulo"].map((tz) => new Intl.DateTimeFormat("it-IT", { timeZone: tz, hour: "numeric", minute: "numeric", timeZoneName: "short" }).format(d));
const ro = new Intl.DateTimeFormat("it-IT", { timeZone: "Asia/Tokyo", hour: "numeric" }).resolvedOptions();
return [parts, zones, ro.locale, ro.timeZone, ro.hourCycle];
// === plurals, lists and relative times in it-IT
const pr = new Intl.PluralRules("it-IT"); const po = new Intl.PluralRules("it-IT", { type: "ordinal" });
const ns = [0, 1, 2, 3, 4, 5, 11, 12, 21, 22, 23, 101, 111, 1000000, 1.5, 0.5, 2.25];
const lists = [["conjunction", "long"], ["conjunction", "short"], ["disjunction", "long"], ["unit", "narrow"]].map(([type, style]) => new Intl.ListFormat("it-IT", { type, style }).format(["alpha", "beta", "gamma", "delta"]));
const two = new Intl.ListFormat("it-IT").format(["Ann", "Ian"]);
const rt = new Intl.RelativeTimeFormat("it-IT", { numeric: "auto" }); const rs = new Intl.RelativeTimeFormat("it-IT", { style: "short" });
return [ns.map((n) => pr.select(n)), ns.map((n) => po.select(n)), lists, two,
  [-2, -1, 0, 1, 2, 5].map((n) => rt.format(n, "day")), [-3, 1, 1.5, 21].map((n) => rs.format(n, "hours")), rt.format(-1, "week"), rt.format(3, "month"), rs.format(-1000, "year")];
// === dates in pt-BR: defaults and styles
const d = new Date(Date.UTC(2025, 2, 9, 17, 5, 7)); const o = { timeZone: "UTC" };
return [d.toLocaleString("pt-BR", o), d.toLocaleDateString("pt-BR", o), d.toLocaleTimeString("pt-BR", o),
  ...["full", "long", "medium", "short"].map((s) => d.toLocaleDateString("pt-BR", { ...o, dateStyle: s })),
  ...["full", "long", "medium", "short"].map((s) => d.toLocaleTimeString("pt-BR", { ...o, timeStyle: s })),
  d.toLocaleString("pt-BR", { ...o, dateStyle: "medium", timeStyle: "short" }), d.toLocaleString("pt-BR", { ...o, dateStyle: "long", timeStyle: "short", hour12: false })];
// === dates in pt-BR: the fields agents pick
const d = new Date(Date.UTC(2024, 10, 28, 8, 30, 0)); const f = (x) => d.toLocaleString("pt-BR", { timeZone: "Europe/Berlin", ...x });
return [f({ weekday: "short", month: "short", day: "numeric" }), f({ year: "numeric", month: "long" }), f({ month: "2-digit", day: "2-digit", year: "numeric" }),
  f({ weekday: "long", year: "numeric", month: "long", day: "numeric" }), f({ hour: "2-digit", minute: "2-digit" }), f({ hour: "numeric", minute: "2-digit", hour12: true }),
  f({ month: "short", day: "numeric", hour: "numeric", minute: "2-digit" }), f({ weekday: "short", hour: "numeric" }), f({ year: "2-digit", month: "narrow" }),
  f({ hour: "numeric", minute: "2-digit", timeZoneName: "short" }), f({ timeZoneName: "long" })];
// === Intl.DateTimeFormat in pt-BR: formatToParts and time zones
const d = new Date(Date.UTC(2025, 6, 4, 23, 45, 1));
const parts = new Intl.DateTimeFormat("pt-BR", { timeZone: "America/New_York", dateStyle: "medium", timeStyle: "long" }).formatToParts(d);
const zones = ["America/Los_Angeles", "Asia/Tokyo", "Asia/Kolkata", "Australia/Sydney", "Europe/London", "America/Sao_Paulo"].map((tz) => new Intl.DateTimeFormat("pt-BR", { timeZone: tz, hour: "numeric", minute: "numeric", timeZoneName: "short" }).format(d));
const ro = new Intl.DateTimeFormat("pt-BR", { timeZone: "Asia/Tokyo", hour: "numeric" }).resolvedOptions();
return [parts, zones, ro.locale, ro.timeZone, ro.hourCycle];
// === plurals, lists and relative times in pt-BR
const pr = new Intl.PluralRules("pt-BR"); const po = new Intl.PluralRules("pt-BR", { type: "ordinal" });
const ns = [0, 1, 2, 3, 4, 5, 11, 12, 21, 22, 23, 101, 111, 1000000, 1.5, 0.5, 2.25];
const lists = [["conjunction", "long"], ["conjunction", "short"], ["disjunction", "long"], ["unit", "narrow"]].map(([type, style]) => new Intl.ListFormat("pt-BR", { type, style }).format(["alpha", "beta", "gamma", "delta"]));
const two = new Intl.ListFormat("pt-BR").format(["Ann", "Ian"]);
const rt = new Intl.RelativeTimeFormat("pt-BR", { numeric: "auto" }); const rs = new Intl.RelativeTimeFormat("pt-BR", { style: "short" });
return [ns.map((n) => pr.select(n)), ns.map((n) => po.select(n)), lists, two,
  [-2, -1, 0, 1, 2, 5].map((n) => rt.format(n, "day")), [-3, 1, 1.5, 21].map((n) => rs.format(n, "hours")), rt.format(-1, "week"), rt.format(3, "month"), rs.format(-1000, "year")];
// === dates in ja-JP: defaults and styles
const d = new Date(Date.UTC(2025, 2, 9, 17, 5, 7)); const o = { timeZone: "UTC" };
return [d.toLocaleString("ja-JP", o), d.toLocaleDateString("ja-JP", o), d.toLocaleTimeString("ja-JP", o),
  ...["full", "long", "medium", "short"].map((s) => d.toLocaleDateString("ja-JP", { ...o, dateStyle: s })),
  ...["full", "long", "medium", "short"].map((s) => d.toLocaleTimeString("ja-JP", { ...o, timeStyle: s })),
  d.toLocaleString("ja-JP", { ...o, dateStyle: "medium", timeStyle: "short" }), d.toLocaleString("ja-JP", { ...o, dateStyle: "long", timeStyle: "short", hour12: false })];
// === dates in ja-JP: the fields agents pick
const d = new Date(Date.UTC(2024, 10, 28, 8, 30, 0)); const f = (x) => d.toLocaleString("ja-JP", { timeZone: "Europe/Berlin", ...x });
return [f({ weekday: "short", month: "short", day: "numeric" }), f({ year: "numeric", month: "long" }), f({ month: "2-digit", day: "2-digit", year: "numeric" }),
  f({ weekday: "long", year: "numeric", month: "long", day: "numeric" }), f({ hour: "2-digit", minute: "2-digit" }), f({ hour: "numeric", minute: "2-digit", hour12: true }),
  f({ month: "short", day: "numeric", hour: "numeric", minute: "2-digit" }), f({ weekday: "short", hour: "numeric" }), f({ year: "2-digit", month: "narrow" }),
  f({ hour: "numeric", minute: "2-digit", timeZoneName: "short" }), f({ timeZoneName: "long" })];
// === Intl.DateTimeFormat in ja-JP: formatToParts and time zones
const d = new Date(Date.UTC(2025, 6, 4, 23, 45, 1));
const parts = new Intl.DateTimeFormat("ja-JP", { timeZone: "America/New_York", dateStyle: "medium", timeStyle: "long" }).formatToParts(d);
const zones = ["America/Los_Angeles", "Asia/Tokyo", "Asia/Kolkata", "Australia/Sydney", "Europe/London", "America/Sao_Paulo"].map((tz) => new Intl.DateTimeFormat("ja-JP", { timeZone: tz, hour: "numeric", minute: "numeric", timeZoneName: "short" }).format(d));
const ro = new Intl.DateTimeFormat("ja-JP", { timeZone: "Asia/Tokyo", hour: "numeric" }).resolvedOptions();
return [parts, zones, ro.locale, ro.timeZone, ro.hourCycle];
// === plurals, lists and relative times in ja-JP
const pr = new Intl.PluralRules("ja-JP"); const po = new Intl.PluralRules("ja-JP", { type: "ordinal" });
const ns = [0, 1, 2, 3, 4, 5, 11, 12, 21, 22, 23, 101, 111, 1000000, 1.5, 0.5, 2.25];
const lists = [["conjunction", "long"], ["conjunction", "short"], ["disjunction", "long"], ["unit", "narrow"]].map(([type, style]) => new Intl.ListFormat("ja-JP", { type, style }).format(["alpha", "beta", "gamma", "delta"]));
const two = new Intl.ListFormat("ja-JP").format(["Ann", "Ian"]);
const rt = new Intl.RelativeTimeFormat("ja-JP", { numeric: "auto" }); const rs = new Intl.RelativeTimeFormat("ja-JP", { style: "short" });
return [ns.map((n) => pr.select(n)), ns.map((n) => po.select(n)), lists, two,
  [-2, -1, 0, 1, 2, 5].map((n) => rt.format(n, "day")), [-3, 1, 1.5, 21].map((n) => rs.format(n, "hours")), rt.format(-1, "week"), rt.format(3, "month"), rs.format(-1000, "year")];
// === dates in zh-CN: defaults and styles
const d = new Date(Date.UTC(2025, 2, 9, 17, 5, 7)); const o = { timeZone: "UTC" };
return [d.toLocaleString("zh-CN", o), d.toLocaleDateString("zh-CN", o), d.toLocaleTimeString("zh-CN", o),
  ...["full", "long", "medium", "short"].map((s) => d.toLocaleDateString("zh-CN", { ...o, dateStyle: s })),
  ...["full", "long", "medium", "short"].map((s) => d.toLocaleTimeString("zh-CN", { ...o, timeStyle: s })),
  d.toLocaleString("zh-CN", { ...o, dateStyle: "medium", timeStyle: "short" }), d.toLocaleString("zh-CN", { ...o, dateStyle: "long", timeStyle: "short", hour12: false })];
// === dates in zh-CN: the fields agents pick
const d = new Date(Date.UTC(2024, 10, 28, 8, 30, 0)); const f = (x) => d.toLocaleString("zh-CN", { timeZone: "Europe/Berlin", ...x });
return [f({ weekday: "short", month: "short", day: "numeric" }), f({ year: "numeric", month: "long" }), f({ month: "2-digit", day: "2-digit", year: "numeric" }),
  f({ weekday: "long", year: "numeric", month: "long", day: "numeric" }), f({ hour: "2-digit", minute: "2-digit" }), f({ hour: "numeric", minute: "2-digit", hour12: true }),
  f({ month: "short", day: "numeric", hour: "numeric", minute: "2-digit" }), f({ weekday: "short", hour: "numeric" }), f({ year: "2-digit", month: "narrow" }),
  f({ hour: "numeric", minute: "2-digit", timeZoneName: "short" }), f({ timeZoneName: "long" })];
// === Intl.DateTimeFormat in zh-CN: formatToParts and time zones
const d = new Date(Date.UTC(2025, 6, 4, 23, 45, 1));
const parts = new Intl.DateTimeFormat("zh-CN", { timeZone: "America/New_York", dateStyle: "medium", timeStyle: "long" }).formatToParts(d);
const zones = ["America/Los_Angeles", "Asia/Tokyo", "Asia/Kolkata", "Australia/Sydney", "Europe/London", "America/Sao_Paulo"].map((tz) => new Intl.DateTimeFormat("zh-CN", { timeZone: tz, hour: "numeric", minute: "numeric", timeZoneName: "short" }).format(d));
const ro = new Intl.DateTimeFormat("zh-CN", { timeZone: "Asia/Tokyo", hour: "numeric" }).resolvedOptions();
return [parts, zones, ro.locale, ro.timeZone, ro.hourCycle];
// === plurals, lists and relative times in zh-CN
const pr = new Intl.PluralRules("zh-CN"); const po = new Intl.PluralRules("zh-CN", { type: "ordinal" });
const ns = [0, 1, 2, 3, 4, 5, 11, 12, 21, 22, 23, 101, 111, 1000000, 1.5, 0.5, 2.25];
const lists = [["conjunction", "long"], ["conjunction", "short"], ["disjunction", "long"], ["unit", "narrow"]].map(([type, style]) => new Intl.ListFormat("zh-CN", { type, style }).format(["alpha", "beta", "gamma", "delta"]));
const two = new Intl.ListFormat("zh-CN").format(["Ann", "Ian"]);
const rt = new Intl.RelativeTimeFormat("zh-CN", { numeric: "auto" }); const rs = new Intl.RelativeTimeFormat("zh-CN", { style: "short" });
return [ns.map((n) => pr.select(n)), ns.map((n) => po.select(n)), lists, two,
  [-2, -1, 0, 1, 2, 5].map((n) => rt.format(n, "day")), [-3, 1, 1.5, 21].map((n) => rs.format(n, "hours")), rt.format(-1, "week"), rt.format(3, "month"), rs.format(-1000, "year")];
// === dates in ko-KR: defaults and styles
const d = new Date(Date.UTC(2025, 2, 9, 17, 5, 7)); const o = { timeZone: "UTC" };
return [d.toLocaleString("ko-KR", o), d.toLocaleDateString("ko-KR", o), d.toLocaleTimeString("ko-KR", o),
  ...["full", "long", "medium", "short"].map((s) => d.toLocaleDateString("ko-KR", { ...o, dateStyle: s })),
  ...["full", "long", "medium", "short"].map((s) => d.toLocaleTimeString("ko-KR", { ...o, timeStyle: s })),
  d.toLocaleString("ko-KR", { ...o, dateStyle: "medium", timeStyle: "short" }), d.toLocaleString("ko-KR", { ...o, dateStyle: "long", timeStyle: "short", hour12: false })];
// === dates in ko-KR: the fields agents pick
const d = new Date(Date.UTC(2024, 10, 28, 8, 30, 0)); const f = (x) => d.toLocaleString("ko-KR", { timeZone: "Europe/Berlin", ...x });
return [f({ weekday: "short", month: "short", day: "numeric" }), f({ year: "numeric", month: "long" }), f({ month: "2-digit", day: "2-digit", year: "numeric" }),
  f({ weekday: "long", year: "numeric", month: "long", day: "numeric" }), f({ hour: "2-digit", minute: "2-digit" }), f({ hour: "numeric", minute: "2-digit", hour12: true }),
  f({ month: "short", day: "numeric", hour: "numeric", minute: "2-digit" }), f({ weekday: "short", hour: "numeric" }), f({ year: "2-digit", month: "narrow" }),
  f({ hour: "numeric", minute: "2-digit", timeZoneName: "short" }), f({ timeZoneName: "long" })];
// === Intl.DateTimeFormat in ko-KR: formatToParts and time zones
const d = new Date(Date.UTC(2025, 6, 4, 23, 45, 1));
const parts = new Intl.DateTimeFormat("ko-KR", { timeZone: "America/New_York", dateStyle: "medium", timeStyle: "long" }).formatToParts(d);
const zones = ["America/Los_Angeles", "Asia/Tokyo", "Asia/Kolkata", "Australia/Sydney", "Europe/London", "America/Sao_Paulo"].map((tz) => new Intl.DateTimeFormat("ko-KR", { timeZone: tz, hour: "numeric", minute: "numeric", timeZoneName: "short" }).format(d));
const ro = new Intl.DateTimeFormat("ko-KR", { timeZone: "Asia/Tokyo", hour: "numeric" }).resolvedOptions();
return [parts, zones, ro.locale, ro.timeZone, ro.hourCycle];
// === plurals, lists and relative times in ko-KR
const pr = new Intl.PluralRules("ko-KR"); const po = new Intl.PluralRules("ko-KR", { type: "ordinal" });
const ns = [0, 1, 2, 3, 4, 5, 11, 12, 21, 22, 23, 101, 111, 1000000, 1.5, 0.5, 2.25];
const lists = [["conjunction", "long"], ["conjunction", "short"], ["disjunction", "long"], ["unit", "narrow"]].map(([type, style]) => new Intl.ListFormat("ko-KR", { type, style }).format(["alpha", "beta", "gamma", "delta"]));
const two = new Intl.ListFormat("ko-KR").format(["Ann", "Ian"]);
const rt = new Intl.RelativeTimeFormat("ko-KR", { numeric: "auto" }); const rs = new Intl.RelativeTimeFormat("ko-KR", { style: "short" });
return [ns.map((n) => pr.select(n)), ns.map((n) => po.select(n)), lists, two,
  [-2, -1, 0, 1, 2, 5].map((n) => rt.format(n, "day")), [-3, 1, 1.5, 21].map((n) => rs.format(n, "hours")), rt.format(-1, "week"), rt.format(3, "month"), rs.format(-1000, "year")];
// === dates in ru-RU: defaults and styles
const d = new Date(Date.UTC(2025, 2, 9, 17, 5, 7)); const o = { timeZone: "UTC" };
return [d.toLocaleString("ru-RU", o), d.toLocaleDateString("ru-RU", o), d.toLocaleTimeString("ru-RU", o),
  ...["full", "long", "medium", "short"].map((s) => d.toLocaleDateString("ru-RU", { ...o, dateStyle: s })),
  ...["full", "long", "medium", "short"].map((s) => d.toLocaleTimeString("ru-RU", { ...o, timeStyle: s })),
  d.toLocaleString("ru-RU", { ...o, dateStyle: "medium", timeStyle: "short" }), d.toLocaleString("ru-RU", { ...o, dateStyle: "long", timeStyle: "short", hour12: false })];
// === dates in ru-RU: the fields agents pick
const d = new Date(Date.UTC(2024, 10, 28, 8, 30, 0)); const f = (x) => d.toLocaleString("ru-RU", { timeZone: "Europe/Berlin", ...x });
return [f({ weekday: "short", month: "short", day: "numeric" }), f({ year: "numeric", month: "long" }), f({ month: "2-digit", day: "2-digit", year: "numeric" }),
  f({ weekday: "long", year: "numeric", month: "long", day: "numeric" }), f({ hour: "2-digit", minute: "2-digit" }), f({ hour: "numeric", minute: "2-digit", hour12: true }),
  f({ month: "short", day: "numeric", hour: "numeric", minute: "2-digit" }), f({ weekday: "short", hour: "numeric" }), f({ year: "2-digit", month: "narrow" }),
  f({ hour: "numeric", minute: "2-digit", timeZoneName: "short" }), f({ timeZoneName: "long" })];
// === Intl.DateTimeFormat in ru-RU: formatToParts and time zones
const d = new Date(Date.UTC(2025, 6, 4, 23, 45, 1));
const parts = new Intl.DateTimeFormat("ru-RU", { timeZone: "America/New_York", dateStyle: "medium", timeStyle: "long" }).formatToParts(d);
const zones = ["America/Los_Angeles", "Asia/Tokyo", "Asia/Kolkata", "Australia/Sydney", "Europe/London", "America/Sao_Paulo"].map((tz) => new Intl.DateTimeFormat("ru-RU", { timeZone: tz, hour: "numeric", minute: "numeric", timeZoneName: "short" }).format(d));
const ro = new Intl.DateTimeFormat("ru-RU", { timeZone: "Asia/Tokyo", hour: "numeric" }).resolvedOptions();
return [parts, zones, ro.locale, ro.timeZone, ro.hourCycle];
// === plurals, lists and relative times in ru-RU
const pr = new Intl.PluralRules("ru-RU"); const po = new Intl.PluralRules("ru-RU", { type: "ordinal" });
const ns = [0, 1, 2, 3, 4, 5, 11, 12, 21, 22, 23, 101, 111, 1000000, 1.5, 0.5, 2.25];
const lists = [["conjunction", "long"], ["conjunction", "short"], ["disjunction", "long"], ["unit", "narrow"]].map(([type, style]) => new Intl.ListFormat("ru-RU", { type, style }).format(["alpha", "beta", "gamma", "delta"]));
const two = new Intl.ListFormat("ru-RU").format(["Ann", "Ian"]);
const rt = new Intl.RelativeTimeFormat("ru-RU", { numeric: "auto" }); const rs = new Intl.RelativeTimeFormat("ru-RU", { style: "short" });
return [ns.map((n) => pr.select(n)), ns.map((n) => po.select(n)), lists, two,
  [-2, -1, 0, 1, 2, 5].map((n) => rt.format(n, "day")), [-3, 1, 1.5, 21].map((n) => rs.format(n, "hours")), rt.format(-1, "week"), rt.format(3, "month"), rs.format(-1000, "year")];
// === dates in hi-IN: defaults and styles
const d = new Date(Date.UTC(2025, 2, 9, 17, 5, 7)); const o = { timeZone: "UTC" };
return [d.toLocaleString("hi-IN", o), d.toLocaleDateString("hi-IN", o), d.toLocaleTimeString("hi-IN", o),
  ...["full", "long", "medium", "short"].map((s) => d.toLocaleDateString("hi-IN", { ...o, dateStyle: s })),
  ...["full", "long", "medium", "short"].map((s) => d.toLocaleTimeString("hi-IN", { ...o, timeStyle: s })),
  d.toLocaleString("hi-IN", { ...o, dateStyle: "medium", timeStyle: "short" }), d.toLocaleString("hi-IN", { ...o, dateStyle: "long", timeStyle: "short", hour12: false })];
// === dates in hi-IN: the fields agents pick
const d = new Date(Date.UTC(2024, 10, 28, 8, 30, 0)); const f = (x) => d.toLocaleString("hi-IN", { timeZone: "Europe/Berlin", ...x });
return [f({ weekday: "short", month: "short", day: "numeric" }), f({ year: "numeric", month: "long" }), f({ month: "2-digit", day: "2-digit", year: "numeric" }),
  f({ weekday: "long", year: "numeric", month: "long", day: "numeric" }), f({ hour: "2-digit", minute: "2-digit" }), f({ hour: "numeric", minute: "2-digit", hour12: true }),
  f({ month: "short", day: "numeric", hour: "numeric", minute: "2-digit" }), f({ weekday: "short", hour: "numeric" }), f({ year: "2-digit", month: "narrow" }),
  f({ hour: "numeric", minute: "2-digit", timeZoneName: "short" }), f({ timeZoneName: "long" })];
// === Intl.DateTimeFormat in hi-IN: formatToParts and time zones
const d = new Date(Date.UTC(2025, 6, 4, 23, 45, 1));
const parts = new Intl.DateTimeFormat("hi-IN", { timeZone: "America/New_York", dateStyle: "medium", timeStyle: "long" }).formatToParts(d);
const zones = ["America/Los_Angeles", "Asia/Tokyo", "Asia/Kolkata", "Australia/Sydney", "Europe/London", "America/Sao_Paulo"].map((tz) => new Intl.DateTimeFormat("hi-IN", { timeZone: tz, hour: "numeric", minute: "numeric", timeZoneName: "short" }).format(d));
const ro = new Intl.DateTimeFormat("hi-IN", { timeZone: "Asia/Tokyo", hour: "numeric" }).resolvedOptions();
return [parts, zones, ro.locale, ro.timeZone, ro.hourCycle];
// === plurals, lists and relative times in hi-IN
const pr = new Intl.PluralRules("hi-IN"); const po = new Intl.PluralRules("hi-IN", { type: "ordinal" });
const ns = [0, 1, 2, 3, 4, 5, 11, 12, 21, 22, 23, 101, 111, 1000000, 1.5, 0.5, 2.25];
const lists = [["conjunction", "long"], ["conjunction", "short"], ["disjunction", "long"], ["unit", "narrow"]].map(([type, style]) => new Intl.ListFormat("hi-IN", { type, style }).format(["alpha", "beta", "gamma", "delta"]));
const two = new Intl.ListFormat("hi-IN").format(["Ann", "Ian"]);
const rt = new Intl.RelativeTimeFormat("hi-IN", { numeric: "auto" }); const rs = new Intl.RelativeTimeFormat("hi-IN", { style: "short" });
return [ns.map((n) => pr.select(n)), ns.map((n) => po.select(n)), lists, two,
  [-2, -1, 0, 1, 2, 5].map((n) => rt.format(n, "day")), [-3, 1, 1.5, 21].map((n) => rs.format(n, "hours")), rt.format(-1, "week"), rt.format(3, "month"), rs.format(-1000, "year")];
// === dates in nl-NL: defaults and styles
const d = new Date(Date.UTC(2025, 2, 9, 17, 5, 7)); const o = { timeZone: "UTC" };
return [d.toLocaleString("nl-NL", o), d.toLocaleDateString("nl-NL", o), d.toLocaleTimeString("nl-NL", o),
  ...["full", "long", "medium", "short"].map((s) => d.toLocaleDateString("nl-NL", { ...o, dateStyle: s })),
  ...["full", "long", "medium", "short"].map((s) => d.toLocaleTimeString("nl-NL", { ...o, timeStyle: s })),
  d.toLocaleString("nl-NL", { ...o, dateStyle: "medium", timeStyle: "short" }), d.toLocaleString("nl-NL", { ...o, dateStyle: "long", timeStyle: "short", hour12: false })];
// === dates in nl-NL: the fields agents pick
const d = new Date(Date.UTC(2024, 10, 28, 8, 30, 0)); const f = (x) => d.toLocaleString("nl-NL", { timeZone: "Europe/Berlin", ...x });
return [f({ weekday: "short", month: "short", day: "numeric" }), f({ year: "numeric", month: "long" }), f({ month: "2-digit", day: "2-digit", year: "numeric" }),
  f({ weekday: "long", year: "numeric", month: "long", day: "numeric" }), f({ hour: "2-digit", minute: "2-digit" }), f({ hour: "numeric", minute: "2-digit", hour12: true }),
  f({ month: "short", day: "numeric", hour: "numeric", minute: "2-digit" }), f({ weekday: "short", hour: "numeric" }), f({ year: "2-digit", month: "narrow" }),
  f({ hour: "numeric", minute: "2-digit", timeZoneName: "short" }), f({ timeZoneName: "long" })];
// === Intl.DateTimeFormat in nl-NL: formatToParts and time zones
const d = new Date(Date.UTC(2025, 6, 4, 23, 45, 1));
const parts = new Intl.DateTimeFormat("nl-NL", { timeZone: "America/New_York", dateStyle: "medium", timeStyle: "long" }).formatToParts(d);
const zones = ["America/Los_Angeles", "Asia/Tokyo", "Asia/Kolkata", "Australia/Sydney", "Europe/London", "America/Sao_Paulo"].map((tz) => new Intl.DateTimeFormat("nl-NL", { timeZone: tz, hour: "numeric", minute: "numeric", timeZoneName: "short" }).format(d));
const ro = new Intl.DateTimeFormat("nl-NL", { timeZone: "Asia/Tokyo", hour: "numeric" }).resolvedOptions();
return [parts, zones, ro.locale, ro.timeZone, ro.hourCycle];
// === plurals, lists and relative times in nl-NL
const pr = new Intl.PluralRules("nl-NL"); const po = new Intl.PluralRules("nl-NL", { type: "ordinal" });
const ns = [0, 1, 2, 3, 4, 5, 11, 12, 21, 22, 23, 101, 111, 1000000, 1.5, 0.5, 2.25];
const lists = [["conjunction", "long"], ["conjunction", "short"], ["disjunction", "long"], ["unit", "narrow"]].map(([type, style]) => new Intl.ListFormat("nl-NL", { type, style }).format(["alpha", "beta", "gamma", "delta"]));
const two = new Intl.ListFormat("nl-NL").format(["Ann", "Ian"]);
const rt = new Intl.RelativeTimeFormat("nl-NL", { numeric: "auto" }); const rs = new Intl.RelativeTimeFormat("nl-NL", { style: "short" });
return [ns.map((n) => pr.select(n)), ns.map((n) => po.select(n)), lists, two,
  [-2, -1, 0, 1, 2, 5].map((n) => rt.format(n, "day")), [-3, 1, 1.5, 21].map((n) => rs.format(n, "hours")), rt.format(-1, "week"), rt.format(3, "month"), rs.format(-1000, "year")];
