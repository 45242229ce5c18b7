package config

import "github.com/sandboxrt/sandbox/runs"

// parseTasks reads the "tasks" block of "gateway": what an operator allows
// the runs that outlive their request (the tasks extension): {"maxTTL":
// "24h", "defaultTTL": "1h", "livePerPrincipal": 16, "keptPerPrincipal":
// 256, "resultBytesPerPrincipal": 67108864, "resultBytesTotal": 134217728, "lease": "15s", "consoleLines": 20}. Keys left
// out keep runs.Limits' defaults.
func (p *parser) parseTasks(n *jsonNode) (runs.Limits, error) {
	var l runs.Limits
	if n.kind != jsonObject {
		return l, p.errAt(n.offset, `"tasks" must be an object such as {"maxTTL": "24h", "livePerPrincipal": 16}, found %s`, n.kind)
	}
	var err error
	for _, k := range n.keys {
		v := k.value
		switch k.name {
		case "maxTTL":
			l.MaxTTL, err = p.duration(v, "maxTTL")
		case "defaultTTL":
			l.DefaultTTL, err = p.duration(v, "defaultTTL")
		case "livePerPrincipal":
			l.LivePerPrincipal, err = p.positiveInt(v, "livePerPrincipal")
		case "keptPerPrincipal":
			l.KeptPerPrincipal, err = p.positiveInt(v, "keptPerPrincipal")
		case "resultBytesPerPrincipal":
			var i int
			if i, err = p.positiveInt(v, "resultBytesPerPrincipal"); err == nil {
				l.ResultBytesPerPrincipal = int64(i)
			}
		case "resultBytesTotal":
			var i int
			if i, err = p.positiveInt(v, "resultBytesTotal"); err == nil {
				l.ResultBytesTotal = int64(i)
			}
		case "lease":
			l.Lease, err = p.duration(v, "lease")
		case "consoleLines":
			l.ConsoleLines, err = p.positiveInt(v, "consoleLines")
		default:
			return l, p.errAt(k.offset, `unknown key %q in "tasks"; known keys: maxTTL, defaultTTL, livePerPrincipal, keptPerPrincipal, resultBytesPerPrincipal, resultBytesTotal, lease, consoleLines`, k.name)
		}
		if err != nil {
			return l, err
		}
	}
	if l.MaxTTL > 0 && l.DefaultTTL > l.MaxTTL {
		return l, p.errAt(n.offset, `"tasks": "defaultTTL" (%v) is longer than "maxTTL" (%v); a client may not be given more than the ceiling`, l.DefaultTTL, l.MaxTTL)
	}
	return l, nil
}
