// intlgen writes runtime/internal/intl/intldata.json: how Node 22's ICU formats dates,
// lists and relative times in the locales the sandbox formats exactly.
// It asks ICU through Node's Intl for every option combination agents can
// pass and records the answer as patterns; the Go side only fills them in,
// so the two agree by construction. Run with `make intldata` (Node from peers/).
import { writeFileSync } from 'node:fs';

const LOCALES = ['en-US', 'en-GB', 'en-IN', 'de-DE', 'fr-FR', 'es-ES', 'it-IT', 'pt-BR', 'ja-JP', 'zh-CN', 'ko-KR', 'ru-RU', 'hi-IN', 'nl-NL'];
const ZONES = ['UTC', 'America/New_York', 'America/Chicago', 'America/Denver', 'America/Los_Angeles', 'America/Phoenix',
  'America/Anchorage', 'Pacific/Honolulu', 'America/Toronto', 'America/Vancouver', 'America/Mexico_City', 'America/Sao_Paulo',
  'America/Argentina/Buenos_Aires', 'Europe/London', 'Europe/Dublin', 'Europe/Lisbon', 'Europe/Paris', 'Europe/Berlin',
  'Europe/Madrid', 'Europe/Rome', 'Europe/Amsterdam', 'Europe/Zurich', 'Europe/Stockholm', 'Europe/Warsaw', 'Europe/Athens',
  'Europe/Helsinki', 'Europe/Istanbul', 'Europe/Moscow', 'Africa/Cairo', 'Africa/Johannesburg', 'Africa/Lagos', 'Asia/Dubai',
  'Asia/Kolkata', 'Asia/Singapore', 'Asia/Shanghai', 'Asia/Hong_Kong', 'Asia/Tokyo', 'Asia/Seoul', 'Asia/Jakarta',
  'Australia/Sydney', 'Australia/Perth', 'Pacific/Auckland'];

const W = ['', 'long', 'short', 'narrow'];
const Y = ['', 'numeric', '2-digit'];
const M = ['', 'numeric', '2-digit', 'long', 'short', 'narrow'];
const D = ['', 'numeric', '2-digit'];
const N = ['', 'numeric', '2-digit'];
const HC = ['', 'h12', 'h23'];
const TZ = ['', 'short', 'long'];

const utc = (y, mo, d, h = 3, mi = 4, s = 5) => new Date(Date.UTC(y, mo, d, h, mi, s));

function dateOpts(k) {
  const [weekday, year, month, day] = k.split(',');
  const o = {};
  if (weekday) o.weekday = weekday;
  if (year) o.year = year;
  if (month) o.month = month;
  if (day) o.day = day;
  return o;
}
function timeOpts(k) {
  const [hour, minute, second, hc, tz] = k.split(',');
  const o = {};
  if (hour) o.hour = hour;
  if (minute) o.minute = minute;
  if (second) o.second = second;
  if (hc) o.hour12 = hc === 'h12';
  if (tz) o.timeZoneName = tz;
  return o;
}

// pattern turns formatToParts over probe dates into "{field}" tokens and
// literal text; names that are words become tables shared per locale.
function pattern(locale, opts, tables) {
  const fmt = new Intl.DateTimeFormat(locale, { timeZone: 'UTC', ...opts });
  const parts = (d) => fmt.formatToParts(d);
  const base = parts(utc(2025, 0, 5));
  const probe = (dates) => dates.map(parts);
  const has = (t) => base.some((p) => p.type === t);
  const months = has('month') ? probe([...Array(12).keys()].map((m) => utc(2025, m, 5))) : [];
  const days = has('weekday') ? probe([...Array(7).keys()].map((i) => utc(2025, 0, 5 + i))) : [];
  const hours = has('hour') || has('dayPeriod') ? probe([...Array(24).keys()].map((h) => utc(2025, 0, 5, h))) : [];
  for (const set of [months, days, hours]) {
    for (const p of set) {
      if (p.length !== base.length || p.some((x, i) => x.type !== base[i].type || (x.type === 'literal' && x.value !== base[i].value))) {
        throw new Error(`${locale} ${JSON.stringify(opts)}: parts change shape between dates`);
      }
    }
  }
  const table = (values) => {
    const key = JSON.stringify(values);
    let i = tables.findIndex((t) => JSON.stringify(t) === key);
    if (i < 0) { tables.push(values); i = tables.length - 1; }
    return i;
  };
  let out = '';
  base.forEach((p, i) => {
    const at = (set) => set.map((q) => q[i].value);
    switch (p.type) {
      case 'literal':
        if (/[{}]/.test(p.value)) throw new Error('brace in a literal');
        out += p.value; return;
      case 'year': out += p.value.length === 2 ? '{yy}' : '{y}'; return;
      case 'month': {
        const v = at(months);
        if (/^\d+$/.test(v[0])) out += v[0] === '01' ? '{MM}' : '{M}';
        else out += `{M#${table(v)}}`;
        return;
      }
      case 'day': out += p.value === '05' ? '{dd}' : '{d}'; return;
      case 'weekday': out += `{E#${table(at(days))}}`; return;
      case 'dayPeriod': out += `{a#${table(at(hours))}}`; return;
      case 'hour': {
        const v = at(hours);
        const cycle = v[0] === '24' ? 'k' : v[0] === '12' ? 'h' : v[13].replace(/^0/, '') === '1' ? 'K' : 'H';
        out += '{' + (v[3] === '03' ? cycle + cycle : cycle) + '}';
        return;
      }
      case 'minute': out += p.value === '04' ? '{mm}' : '{m}'; return;
      case 'second': out += p.value === '05' ? '{ss}' : '{s}'; return;
      case 'timeZoneName': out += `{z:${opts.timeZoneName || ({ full: 'long', long: 'short' })[opts.timeStyle]}}`; return;
      default: throw new Error(`${locale}: unexpected part ${p.type}`);
    }
  });
  return out;
}

// gmtFormat is how a locale writes an offset with no zone name.
function gmtFormat(locale) {
  const name = (tz, style) => new Intl.DateTimeFormat(locale, { timeZone: tz, timeZoneName: style }).formatToParts(utc(2025, 0, 15)).find((p) => p.type === 'timeZoneName').value;
  return {
    pos: [name('Etc/GMT-5', 'short').replace('5', '{h}'), name('Etc/GMT-5', 'long').replace('05:00', '{hh}:{mm}')],
    posMin: name('Asia/Kathmandu', 'short').replace('5:45', '{h}:{mm}'),
    neg: [name('Etc/GMT+5', 'short').replace('5', '{h}'), name('Etc/GMT+5', 'long').replace('05:00', '{hh}:{mm}')],
  };
}

function zoneNames(locale) {
  const out = {};
  for (const tz of ZONES) {
    const names = [];
    for (const d of [utc(2025, 0, 15, 12), utc(2025, 6, 15, 12)]) {
      for (const style of ['short', 'long']) {
        names.push(new Intl.DateTimeFormat(locale, { timeZone: tz, timeZoneName: style }).formatToParts(d).find((p) => p.type === 'timeZoneName').value);
      }
    }
    // Only names a GMT offset would not give are kept.
    if (names.some((n) => !/^(GMT|UTC)[+\u2212-]/.test(n))) out[tz] = names; // [winter short, winter long, summer short, summer long]
  }
  return out;
}

function lists(locale) {
  const out = {};
  for (const type of ['conjunction', 'disjunction', 'unit']) {
    for (const style of ['long', 'short', 'narrow']) {
      const lf = new Intl.ListFormat(locale, { type, style });
      const two = lf.format(['{0}', '{1}']);
      const three = lf.format(['{0}', '{1}', '{2}']);
      const four = lf.format(['{0}', '{1}', '{2}', '{3}']);
      // three = start(0, end(1, 2)); four = start(0, middle(1, end(2, 3)))
      const start = three.slice(0, three.indexOf('{1}')) + '{1}';
      const endPart = three.slice(three.indexOf('{1}')).replace('{1}', '{0}').replace('{2}', '{1}');
      const middle = four.slice(four.indexOf('{1}'), four.indexOf('{2}')).replace('{1}', '{0}') + '{1}';
      const check = start.replace('{1}', middle.replace('{1}', endPart.replace('{0}', '{2}').replace('{1}', '{3}')).replace('{0}', '{1}'));
      if (check !== four) throw new Error(`${locale} list ${type}/${style}: ${check} != ${four}`);
      out[`${type}-${style}`] = [two, start, middle, endPart];
    }
  }
  return out;
}

const UNITS = ['second', 'minute', 'hour', 'day', 'week', 'month', 'quarter', 'year'];
function relative(locale) {
  const pr = new Intl.PluralRules(locale);
  const samples = {};
  for (const n of [0, 1, 2, 3, 4, 5, 6, 11, 12, 21, 22, 25, 100, 101, 1000000, 1.5, 0.5]) {
    const c = pr.select(n);
    if (!(c in samples)) samples[c] = n;
  }
  const out = {};
  for (const unit of UNITS) {
    for (const style of ['long', 'short', 'narrow']) {
      const always = new Intl.RelativeTimeFormat(locale, { style });
      const auto = new Intl.RelativeTimeFormat(locale, { style, numeric: 'auto' });
      const entry = { past: {}, future: {}, auto: {} };
      for (const [cat, n] of Object.entries(samples)) {
        for (const [dir, v] of [['past', -n], ['future', n]]) {
          const parts = always.formatToParts(v, unit);
          entry[dir][cat] = parts.map((p) => (p.type === 'literal' ? p.value : '{0}')).join('').replace(/(\{0\})+/, '{0}');
        }
      }
      for (const v of [-2, -1, 0, 1, 2]) {
        const s = auto.format(v, unit);
        if (s !== always.format(v, unit)) entry.auto[v] = s;
      }
      out[`${unit}-${style}`] = entry;
    }
  }
  return out;
}

const data = { node: process.version, icu: process.versions.icu, cldr: process.versions.cldr, locales: {} };
for (const locale of LOCALES) {
  const tables = [];
  const date = {};
  for (const w of W) for (const y of Y) for (const m of M) for (const d of D) {
    const k = [w, y, m, d].join(',');
    if (k === ',,,') continue;
    date[k] = pattern(locale, dateOpts(k), tables);
  }
  const time = {};
  for (const h of N) for (const mi of N) for (const s of N) for (const hc of HC) for (const tz of TZ) {
    if (!h && hc) continue;
    const k = [h, mi, s, hc, tz].join(',');
    if (k === ',,,,') continue;
    time[k] = pattern(locale, timeOpts(k), tables);
  }
  // A date pattern and a time pattern join by a glue template ("{0}" is
  // where the time goes) that ICU picks by the fields; the usual one per
  // date is in glue, the exceptions in glueFor, and combinations with a
  // pattern of their own (a weekday with a time: "Sun 5, 3:04" in en-GB)
  // in whole.
  for (const tz of ['short', 'long']) time[',,,,' + tz] = `{z:${tz}}`;
  const glue = {}, glueFor = {}, whole = {};
  for (const k of Object.keys(date)) {
    const found = {};
    for (const tk of Object.keys(time)) {
      const p = pattern(locale, { ...dateOpts(k), ...timeOpts(tk) }, tables);
      const d = date[k], t = time[tk];
      const at = p.startsWith(d) ? p.indexOf(t, d.length) : -1;
      if (at < 0) { whole[k + '|' + tk] = p; continue; }
      found[tk] = p.slice(d.length, at) + '{0}' + p.slice(at + t.length);
    }
    const count = {};
    for (const g of Object.values(found)) count[g] = (count[g] || 0) + 1;
    glue[k] = Object.keys(count).sort((a, b) => count[b] - count[a])[0];
    for (const [tk, g] of Object.entries(found)) if (g !== glue[k]) glueFor[k + '|' + tk] = g;
  }
  const styles = {};
  for (const ds of ['', 'full', 'long', 'medium', 'short']) for (const ts of ['', 'full', 'long', 'medium', 'short']) {
    if (!ds && !ts) continue;
    const o = {};
    if (ds) o.dateStyle = ds;
    if (ts) o.timeStyle = ts;
    styles[ds + ',' + ts] = pattern(locale, o, tables);
    for (const hc of ['h12', 'h23']) if (ts) styles[ds + ',' + ts + ',' + hc] = pattern(locale, { ...o, hour12: hc === 'h12' }, tables);
  }
  const nf = new Intl.NumberFormat(locale).resolvedOptions();
  if (nf.numberingSystem !== 'latn') throw new Error(`${locale}: digits are ${nf.numberingSystem}`);
  data.locales[locale] = {
    hourCycle: new Intl.DateTimeFormat(locale, { hour: 'numeric' }).resolvedOptions().hourCycle,
    tables, date, time, glue, glueFor, whole, styles, gmt: gmtFormat(locale), zones: zoneNames(locale), lists: lists(locale), relative: relative(locale),
  };
}

for (const [locale, L] of Object.entries(data.locales)) console.error(locale, 'glue exceptions:', Object.keys(L.glueFor).length, 'whole:', Object.keys(L.whole).length);
writeFileSync(new URL('../intldata.json', import.meta.url), JSON.stringify(data));
