package intl

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// intldata.json is how Node 22's ICU writes dates, lists and relative
// times in the locales formatted exactly, recorded as patterns by
// intlgen/intlgen.mjs (make intldata). The Go side fills the patterns in.
//
//go:embed intldata.json
var intlDataJSON []byte

// intlLocale is one locale's recorded patterns.
type intlLocale struct {
	HourCycle string     // the default: h12 or h23
	Tables    [][]string // month (12), weekday (7, Sunday first) and day-period (24, by hour) names
	Date      map[string]string
	Time      map[string]string
	Glue      map[string]string // date key -> "<between>{0}<after>", {0} the time
	GlueFor   map[string]string // "date|time" -> a glue that differs from Glue
	Whole     map[string]string // "date|time" -> a pattern of its own
	Styles    map[string]string // "dateStyle,timeStyle[,hc]"
	GMT       struct {
		Pos    [2]string // short, long: "GMT+{h}", "GMT+{hh}:{mm}"
		PosMin string
		Neg    [2]string
	}
	Zones    map[string][4]string // winter short, winter long, summer short, summer long
	Lists    map[string][4]string // "type-style" -> two, start, middle, end
	Relative map[string]struct {
		Past, Future map[string]string // plural category -> "vor {0} Tagen"
		Auto         map[string]string // "-1" -> "gestern"
	}
}

var intlData = struct {
	once    sync.Once
	raw     map[string]json.RawMessage
	mu      sync.Mutex
	decoded map[string]*intlLocale
}{decoded: map[string]*intlLocale{}}

// localeData decodes one locale's patterns the first time a run in this
// process uses them.
func localeData(tag string) *intlLocale {
	intlData.once.Do(func() {
		var top struct{ Locales map[string]json.RawMessage }
		if err := json.Unmarshal(intlDataJSON, &top); err != nil {
			panic("runtime: intldata.json: " + err.Error())
		}
		intlData.raw = top.Locales
	})
	intlData.mu.Lock()
	defer intlData.mu.Unlock()
	if l, ok := intlData.decoded[tag]; ok {
		return l
	}
	raw, ok := intlData.raw[tag]
	if !ok {
		raw = intlData.raw["en-US"]
	}
	l := &intlLocale{}
	if err := json.Unmarshal(raw, l); err != nil {
		panic("runtime: intldata.json: " + err.Error())
	}
	intlData.decoded[tag] = l
	return l
}

// datePart is one piece of a formatted date, as formatToParts lists it.
type datePart struct{ typ, value string }

// fill formats t with a recorded pattern.
func (l *intlLocale) fill(pattern string, t time.Time) []datePart {
	var parts []datePart
	lit := func(s string) {
		if s == "" {
			return
		}
		if n := len(parts); n > 0 && parts[n-1].typ == "literal" {
			parts[n-1].value += s
			return
		}
		parts = append(parts, datePart{"literal", s})
	}
	for pattern != "" {
		open := strings.IndexByte(pattern, '{')
		if open < 0 {
			lit(pattern)
			break
		}
		lit(pattern[:open])
		end := strings.IndexByte(pattern[open:], '}') + open
		token := pattern[open+1 : end]
		pattern = pattern[end+1:]
		name, table := token, -1
		if i := strings.IndexByte(token, '#'); i >= 0 {
			name = token[:i]
			fmt.Sscan(token[i+1:], &table)
		}
		two := func(n int) string { return fmt.Sprintf("%02d", n) }
		h := t.Hour()
		switch name {
		case "y":
			parts = append(parts, datePart{"year", fmt.Sprint(t.Year())})
		case "yy":
			parts = append(parts, datePart{"year", two(t.Year() % 100)})
		case "M":
			if table >= 0 {
				parts = append(parts, datePart{"month", l.Tables[table][t.Month()-1]})
			} else {
				parts = append(parts, datePart{"month", fmt.Sprint(int(t.Month()))})
			}
		case "MM":
			parts = append(parts, datePart{"month", two(int(t.Month()))})
		case "d":
			parts = append(parts, datePart{"day", fmt.Sprint(t.Day())})
		case "dd":
			parts = append(parts, datePart{"day", two(t.Day())})
		case "E":
			parts = append(parts, datePart{"weekday", l.Tables[table][t.Weekday()]})
		case "a":
			parts = append(parts, datePart{"dayPeriod", l.Tables[table][h]})
		case "h", "hh", "K", "KK", "H", "HH", "k", "kk":
			switch name[0] {
			case 'h':
				if h = h % 12; h == 0 {
					h = 12
				}
			case 'K':
				h %= 12
			case 'k':
				if h == 0 {
					h = 24
				}
			}
			v := fmt.Sprint(h)
			if len(name) == 2 {
				v = two(h)
			}
			parts = append(parts, datePart{"hour", v})
		case "m":
			parts = append(parts, datePart{"minute", fmt.Sprint(t.Minute())})
		case "mm":
			parts = append(parts, datePart{"minute", two(t.Minute())})
		case "s":
			parts = append(parts, datePart{"second", fmt.Sprint(t.Second())})
		case "ss":
			parts = append(parts, datePart{"second", two(t.Second())})
		case "z:short":
			parts = append(parts, datePart{"timeZoneName", l.zoneName(t, 0)})
		case "z:long":
			parts = append(parts, datePart{"timeZoneName", l.zoneName(t, 1)})
		default:
			lit("{" + token + "}")
		}
	}
	return parts
}

// zoneName is the locale's short (0) or long (1) name of t's zone: the
// recorded name for the common zones, otherwise the offset from GMT.
func (l *intlLocale) zoneName(t time.Time, long int) string {
	if names, ok := l.Zones[zoneID(t.Location())]; ok {
		_, winter := time.Date(t.Year(), time.January, 15, 12, 0, 0, 0, t.Location()).Zone()
		if _, off := t.Zone(); off == winter {
			return names[long]
		}
		return names[2+long]
	}
	_, off := t.Zone()
	tmpl := l.GMT.Pos[long]
	if off < 0 {
		tmpl, off = l.GMT.Neg[long], -off
	}
	hours, minutes := off/3600, off%3600/60
	if off == 0 {
		// GMT itself: the template without its sign and hours.
		return strings.NewReplacer("+{h}", "", "-{h}", "", "+{hh}:{mm}", "", "\u2212{h}", "").Replace(l.GMT.Pos[long])
	}
	if long == 0 && minutes != 0 {
		tmpl = strings.Replace(tmpl, "{h}", "{h}:{mm}", 1)
	}
	return strings.NewReplacer("{hh}", fmt.Sprintf("%02d", hours), "{h}", fmt.Sprint(hours), "{mm}", fmt.Sprintf("%02d", minutes)).Replace(tmpl)
}

// zoneID is the IANA name of a location; for the process's local zone,
// the name TZ or /etc/localtime gives.
func zoneID(loc *time.Location) string {
	if loc != time.Local {
		return loc.String()
	}
	localZone.once.Do(func() {
		localZone.name = "UTC"
		if tz := strings.TrimPrefix(os.Getenv("TZ"), ":"); tz != "" {
			localZone.name = tz
		} else if target, err := filepath.EvalSymlinks("/etc/localtime"); err == nil {
			if i := strings.Index(target, "zoneinfo/"); i >= 0 {
				localZone.name = target[i+len("zoneinfo/"):]
			}
		}
		if localZone.name == "Etc/UTC" || localZone.name == "UTC0" {
			localZone.name = "UTC"
		}
	})
	return localZone.name
}

var localZone struct {
	once sync.Once
	name string
}
