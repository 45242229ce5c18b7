package gateway

import (
	"encoding/json"
	"sort"
	"sync"
	"sync/atomic"
)

// Tool is one upstream tool as the catalog knows it. Schemas and annotations
// are exactly the bytes the upstream sent (its _meta aside), never re-encoded.
type Tool struct {
	ID           string // "server:tool", normalized
	Server       string // normalized server name
	Name         string // normalized tool name (the part after ':')
	UpstreamName string // the upstream's own name, sent on calls
	WireName     string // the name on the gateway's MCP front end
	Title        string
	Description  string
	InputSchema  json.RawMessage // raw; {"type":"object"} when the upstream sent none
	OutputSchema json.RawMessage // raw; nil when absent
	Annotations  json.RawMessage // raw; nil when absent
	// Raw is the whole tool definition as listed, with "_meta" removed; the MCP
	// front end re-exposes it so that fields this gateway does not know about
	// (icons, execution, ...) reach clients unchanged.
	Raw json.RawMessage

	validator *inputValidator
}

// Resource is a resource listed by an upstream. URI is the upstream's own.
type Resource struct {
	Server string
	URI    string
	Name   string
	Raw    json.RawMessage // the listed definition, _meta removed
}

// ResourceTemplate is a resource template listed by an upstream.
type ResourceTemplate struct {
	Server      string
	URITemplate string
	Name        string
	Raw         json.RawMessage
}

// Prompt is a prompt listed by an upstream.
type Prompt struct {
	Server   string
	Name     string // the upstream's own name
	WireName string // the name on the MCP front end
	Raw      json.RawMessage
}

// CatalogChange says how one server's tools changed. The vector index and the
// MCP front end apply it incrementally. Removed tools carry their last
// definition.
type CatalogChange struct {
	Server  string
	Added   []Tool
	Removed []Tool
	Changed []Tool
	// ResourcesChanged and PromptsChanged report that the server's resources,
	// resource templates or prompts were re-listed with a different result.
	ResourcesChanged bool
	PromptsChanged   bool
}

// serverListing is everything one server listed.
type serverListing struct {
	tools     []*Tool // sorted by Name
	resources []Resource
	templates []ResourceTemplate
	prompts   []Prompt
}

// catalogSnapshot is immutable once published; readers load it atomically,
// so routing never takes a lock to find a tool.
type catalogSnapshot struct {
	servers map[string]*serverListing
	byID    map[string]*Tool
	byWire  map[string]*Tool
	tools   []Tool // sorted by ID
	prompts map[string]*Prompt
}

// catalog holds the current snapshot and the change subscribers.
type catalog struct {
	mu       sync.Mutex // serializes updates and deliveries
	snap     atomic.Pointer[catalogSnapshot]
	naming   WireNaming
	reserved map[string]bool // wire names taken by built-in tools

	subMu sync.Mutex
	subs  map[int]func(CatalogChange)
	next  int

	// While servers make their first connection together (Gateway.Start),
	// their listings gather in held and are published once, by release:
	// publishing after each of n servers rebuilt the whole catalog n times
	// (10,000 tools on 30 servers took 4 s). held is nil otherwise.
	held map[string]*serverListing
}

// hold gathers listings instead of publishing them, until release.
func (c *catalog) hold() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.held = map[string]*serverListing{}
	for k, v := range c.load().servers {
		c.held[k] = v
	}
}

// listing is a server's latest listing: the one gathered while held, or
// the published one.
func (c *catalog) listing(server string) *serverListing {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.held != nil {
		return c.held[server]
	}
	return c.load().servers[server]
}

// release publishes what was gathered since hold, once, and tells the
// subscribers what each server added.
func (c *catalog) release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.held == nil {
		return
	}
	old := c.load()
	next := c.publish(c.held)
	c.held = nil
	names := make([]string, 0, len(next.servers))
	for name := range next.servers {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if change := diffListing(name, old.servers[name], next.servers[name], old, next); !change.empty() {
			c.notify(change)
		}
	}
}

func newCatalog(naming WireNaming) *catalog {
	c := &catalog{naming: naming, subs: map[int]func(CatalogChange){}, reserved: map[string]bool{}}
	c.snap.Store(&catalogSnapshot{servers: map[string]*serverListing{}, byID: map[string]*Tool{}, byWire: map[string]*Tool{}, prompts: map[string]*Prompt{}})
	return c
}

func (c *catalog) load() *catalogSnapshot { return c.snap.Load() }

// reserveWireNames keeps names (built-in and hub tools) away from upstream
// tools. The catalog is published again only when an upstream tool holds
// one of them: wire names are claimed greedily, so a name no tool holds was
// never claimed and reserving it changes no one's (and each publish of a
// 10,000-tool catalog costs ~45 ms, paid at start for every built-in tool).
func (c *catalog) reserveWireNames(names ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	snap := c.load()
	held := false
	for _, n := range names {
		c.reserved[n] = true
		if _, ok := snap.byWire[n]; ok {
			held = true
		}
	}
	if held {
		c.publish(snap.servers)
	}
}

// setServer replaces one server's listing (nil removes the server) and
// notifies subscribers of the difference.
func (c *catalog) setServer(server string, l *serverListing) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.held != nil {
		if l == nil {
			delete(c.held, server)
		} else {
			c.held[server] = l
		}
		return
	}
	old := c.load()
	servers := make(map[string]*serverListing, len(old.servers)+1)
	for k, v := range old.servers {
		servers[k] = v
	}
	prev := servers[server]
	if l == nil {
		delete(servers, server)
	} else {
		servers[server] = l
	}
	next := c.publish(servers)
	change := diffListing(server, prev, l, old, next)
	if change.empty() {
		return
	}
	c.notify(change)
}

// notify delivers a change to the subscribers; c.mu is held.
func (c *catalog) notify(change CatalogChange) {
	c.subMu.Lock()
	subs := make([]func(CatalogChange), 0, len(c.subs))
	keys := make([]int, 0, len(c.subs))
	for k := range c.subs {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	for _, k := range keys {
		subs = append(subs, c.subs[k])
	}
	c.subMu.Unlock()
	for _, fn := range subs {
		fn(change)
	}
}

// publish builds and stores a snapshot from server listings (wire names are
// assigned over the whole catalog, so one server's change can rename a
// colliding tool of another; the assignment is deterministic).
func (c *catalog) publish(servers map[string]*serverListing) *catalogSnapshot {
	ids := map[string]string{}
	for _, l := range servers {
		for _, t := range l.tools {
			ids[t.ID] = t.UpstreamName
		}
	}
	wire := assignWireNames(ids, c.naming, c.reserved)
	s := &catalogSnapshot{
		servers: servers,
		byID:    make(map[string]*Tool, len(ids)),
		byWire:  make(map[string]*Tool, len(ids)),
		tools:   make([]Tool, 0, len(ids)),
		prompts: map[string]*Prompt{},
	}
	for _, l := range servers {
		for _, t := range l.tools {
			if t.WireName != wire[t.ID] {
				cp := *t
				cp.WireName = wire[t.ID]
				t = &cp
			}
			s.byID[t.ID] = t
			s.byWire[t.WireName] = t
			s.tools = append(s.tools, *t)
		}
	}
	sort.Slice(s.tools, func(i, j int) bool { return s.tools[i].ID < s.tools[j].ID })
	// Prompts get wire names the same way tools do.
	pids := map[string]string{}
	for name, l := range servers {
		for _, p := range l.prompts {
			if n, err := ValidateName(p.Name); err == nil {
				pids[ToolID(name, n)] = p.Name
			}
		}
	}
	pwire := assignWireNames(pids, c.naming, nil)
	for name, l := range servers {
		for i := range l.prompts {
			p := l.prompts[i]
			n, err := ValidateName(p.Name)
			if err != nil {
				continue
			}
			p.WireName = pwire[ToolID(name, n)]
			s.prompts[p.WireName] = &p
		}
	}
	c.snap.Store(s)
	return s
}

func (ch CatalogChange) empty() bool {
	return len(ch.Added) == 0 && len(ch.Removed) == 0 && len(ch.Changed) == 0 && !ch.ResourcesChanged && !ch.PromptsChanged
}

func diffListing(server string, prev, next *serverListing, oldSnap, newSnap *catalogSnapshot) CatalogChange {
	ch := CatalogChange{Server: server}
	before := map[string]*Tool{}
	if prev != nil {
		for _, t := range prev.tools {
			before[t.ID] = oldSnap.byID[t.ID]
		}
	}
	after := map[string]*Tool{}
	if next != nil {
		for _, t := range next.tools {
			after[t.ID] = newSnap.byID[t.ID]
		}
	}
	for id, t := range after {
		if b, ok := before[id]; !ok {
			ch.Added = append(ch.Added, *t)
		} else if !sameTool(b, t) {
			ch.Changed = append(ch.Changed, *t)
		}
	}
	for id, t := range before {
		if _, ok := after[id]; !ok {
			ch.Removed = append(ch.Removed, *t)
		}
	}
	byID := func(ts []Tool) { sort.Slice(ts, func(i, j int) bool { return ts[i].ID < ts[j].ID }) }
	byID(ch.Added)
	byID(ch.Removed)
	byID(ch.Changed)
	var pr, nr, pp, np []json.RawMessage
	if prev != nil {
		for _, r := range prev.resources {
			pr = append(pr, r.Raw)
		}
		for _, r := range prev.templates {
			pr = append(pr, r.Raw)
		}
		for _, p := range prev.prompts {
			pp = append(pp, p.Raw)
		}
	}
	if next != nil {
		for _, r := range next.resources {
			nr = append(nr, r.Raw)
		}
		for _, r := range next.templates {
			nr = append(nr, r.Raw)
		}
		for _, p := range next.prompts {
			np = append(np, p.Raw)
		}
	}
	ch.ResourcesChanged = !sameRaws(pr, nr)
	ch.PromptsChanged = !sameRaws(pp, np)
	return ch
}

func sameTool(a, b *Tool) bool {
	return a.WireName == b.WireName && string(a.Raw) == string(b.Raw)
}

func sameRaws(a, b []json.RawMessage) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if string(a[i]) != string(b[i]) {
			return false
		}
	}
	return true
}

func (c *catalog) subscribe(fn func(CatalogChange)) (cancel func()) {
	c.subMu.Lock()
	defer c.subMu.Unlock()
	id := c.next
	c.next++
	c.subs[id] = fn
	return func() {
		c.subMu.Lock()
		defer c.subMu.Unlock()
		delete(c.subs, id)
	}
}
