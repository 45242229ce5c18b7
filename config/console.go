package config

// Console is the "console" block of "gateway": the operator console in the
// browser that `sandbox serve --http` serves at /ui/ (docs/console.md).
//
//	"gateway": {"console": {"disabled": true}}
type Console struct {
	// Disabled turns the console off: /ui/ is not served at all.
	Disabled bool
}

func (p *parser) parseConsole(n *jsonNode, c *Console) error {
	if n.kind != jsonObject {
		return p.errAt(n.offset, `"console" must be an object such as {"disabled": true}, found %s`, n.kind)
	}
	for _, k := range n.keys {
		switch k.name {
		case "disabled":
			var err error
			if c.Disabled, err = p.boolean(k.value, "disabled"); err != nil {
				return err
			}
		default:
			return p.errAt(k.offset, `unknown key %q in "console"; known keys: disabled`, k.name)
		}
	}
	return nil
}
