package codemode

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/typegen"
)

// Learned result types. Most MCP tools declare no outputSchema, so an agent
// sees Promise<ToolResult> and has to log a result before it can use it.
// Each successful call's decoded result (the value the VM receives) is
// folded into a per-tool shape, and search_tools declares that shape as the
// function's return type, marked "@inferred from N calls".
//
// What a shape keeps, and all it keeps: which JSON types each position held
// (null, boolean, number, string, array, object), how often each object
// property was present (to tell required from optional), and property names
// that look like identifiers ([A-Za-z_$][A-Za-z0-9_$-]*, at most 64
// characters). Never a value: not a string, not a number, not an array's
// length. An object with a key that does not look like an identifier
// ("alice@example.com", "2024-05-01", "a b") or with more than
// maxShapeKeys keys is kept as a map (Record<string, T>) without its keys,
// since such keys are data. Nesting deeper than maxShapeDepth, and array
// elements past maxShapeItems, widen to JsonValue or are not looked at.
// So one principal's results tell another nothing but their types.
//
// And their keys only once two tenants' results had them: each property
// records the tenants whose results had it (shapeProducer, a hash; at most
// sharedFromTenants-1 of them, then only that it is shared), and a caller
// is declared the properties its own tenant's results had and the shared
// ones. A word that is one tenant's (a field a customer named) is never
// declared to another, and planting one in everyone's declarations takes
// results from two tenants. Shapes read back (shapes.json, the pool that
// replicas share in Redis) are checked as strictly as a result is folded
// (checked): a key that is no identifier, an object with too many keys, a
// shape too deep, is made what folding would have made it.

const (
	maxShapeDepth = 8
	maxShapeKeys  = 48
	maxShapeItems = 64
	maxKeyLength  = 64
	// sharedFromTenants is how many tenants' results must have had a key
	// for it to be declared to every caller.
	sharedFromTenants = 2
	maxProducerTag    = 16 // bytes of a shapeProducer tag read back
)

// shapeProducer is the tag of whose results taught a shape: the caller's
// tenant (the principals that may share state, auth.Principal.Tenant), or
// for the operator and the anonymous principal, which have none, the
// principal. A hash, so that the pool holds no tenant's name.
func shapeProducer(p auth.Principal) string {
	id := p.Tenant
	if id == "" {
		id = p.Key()
	}
	sum := sha256.Sum256([]byte("sandbox learned-shape producer\x00" + id))
	return base64.RawURLEncoding.EncodeToString(sum[:8])
}

// kinds is a set of JSON types.
type kinds uint8

const (
	kNull kinds = 1 << iota
	kBool
	kNumber
	kString
	kArray
	kObject
	kAny // deeper than maxShapeDepth: any JSON value
)

// shape is what is known of the values seen at one position.
type shape struct {
	Kinds   kinds             `json:"k"`
	Seen    int               `json:"n,omitempty"` // as a property: the objects that had it
	Objects int               `json:"o,omitempty"` // objects seen here
	Props   map[string]*shape `json:"p,omitempty"`
	Map     *shape            `json:"m,omitempty"` // an object kept as a map: its values
	Items   *shape            `json:"i,omitempty"` // array elements
	// As a property: the tenants whose results had it (shapeProducer
	// tags), until sharedFromTenants did; then Shared, without them.
	By     []string `json:"b,omitempty"`
	Shared bool     `json:"s,omitempty"`
}

// producedBy records that a tenant's results had this property.
func (s *shape) producedBy(tag string) {
	if s.Shared || tag == "" || slices.Contains(s.By, tag) {
		return
	}
	s.By = append(s.By, tag)
	if len(s.By) >= sharedFromTenants {
		s.Shared, s.By = true, nil
	}
}

// producersOf takes o's producers into s's (the same property, learned
// apart).
func (s *shape) producersOf(o *shape) {
	if o.Shared {
		s.Shared, s.By = true, nil
		return
	}
	for _, tag := range o.By {
		s.producedBy(tag)
	}
}

// declaredTo reports whether a property is declared to the caller whose
// tenant's tag is viewer.
func (s *shape) declaredTo(viewer string) bool {
	return s.Shared || (viewer != "" && slices.Contains(s.By, viewer))
}

// absorb folds one JSON value, a result of the tenant tagged by, into s. It
// reports an error for text that is not JSON (results come from
// runtime.DecodeResult, which checked them).
func (s *shape) absorb(sc *jsonScanner, depth int, by string) error {
	sc.space()
	if sc.i >= len(sc.b) {
		return errShapeSyntax
	}
	if depth >= maxShapeDepth {
		s.Kinds |= kAny
		return sc.skip()
	}
	switch c := sc.b[sc.i]; {
	case c == '{':
		s.Kinds |= kObject
		s.Objects++
		sc.i++
		first := true
		for {
			if first && sc.eat('}') {
				return nil
			}
			key, err := sc.key()
			if err != nil {
				return err
			}
			first = false
			if s.Map == nil && (!identifierLike(key) || (s.Props[key] == nil && len(s.Props) >= maxShapeKeys)) {
				s.toMap()
			}
			var child *shape
			if s.Map != nil {
				child = s.Map
			} else {
				if s.Props == nil {
					s.Props = map[string]*shape{}
				}
				if child = s.Props[key]; child == nil {
					child = &shape{}
					s.Props[key] = child
				}
				child.Seen++
				child.producedBy(by)
			}
			if err := child.absorb(sc, depth+1, by); err != nil {
				return err
			}
			if sc.eat(',') {
				continue
			}
			if sc.eat('}') {
				return nil
			}
			return errShapeSyntax
		}
	case c == '[':
		s.Kinds |= kArray
		sc.i++
		for n := 0; ; n++ {
			if n == 0 && sc.eat(']') {
				return nil
			}
			if n < maxShapeItems {
				if s.Items == nil {
					s.Items = &shape{}
				}
				if err := s.Items.absorb(sc, depth+1, by); err != nil {
					return err
				}
			} else if err := sc.skip(); err != nil {
				return err
			}
			if sc.eat(',') {
				continue
			}
			if sc.eat(']') {
				return nil
			}
			return errShapeSyntax
		}
	case c == '"':
		s.Kinds |= kString
		_, err := sc.str(false)
		return err
	case c == 't' || c == 'f':
		s.Kinds |= kBool
		return sc.skip()
	case c == 'n':
		s.Kinds |= kNull
		return sc.skip()
	default:
		s.Kinds |= kNumber
		return sc.skip()
	}
}

// toMap forgets an object's keys (and who produced them) and keeps one
// shape for all its values.
func (s *shape) toMap() {
	m := &shape{}
	for _, p := range s.Props {
		m.merge(p)
	}
	s.Map, s.Props = m, nil
}

// merge folds another shape into s (used when an object becomes a map).
func (s *shape) merge(o *shape) {
	if o == nil {
		return
	}
	s.Kinds |= o.Kinds
	s.Objects += o.Objects
	if o.Items != nil {
		if s.Items == nil {
			s.Items = &shape{}
		}
		s.Items.merge(o.Items)
	}
	if o.Map != nil || (s.Map != nil && o.Props != nil) {
		if s.Map == nil {
			s.toMap()
		}
		if o.Map != nil {
			s.Map.merge(o.Map)
		}
		for _, p := range o.Props {
			s.Map.merge(p)
		}
		return
	}
	for k, p := range o.Props {
		if s.Props == nil {
			s.Props = map[string]*shape{}
		}
		if s.Props[k] == nil {
			if len(s.Props) >= maxShapeKeys {
				s.toMap()
				s.merge(o)
				return
			}
			s.Props[k] = &shape{}
		}
		s.Props[k].merge(p)
		s.Props[k].Seen += p.Seen
		s.Props[k].producersOf(p)
	}
}

func identifierLike(k string) bool {
	if k == "" || len(k) > maxKeyLength {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		switch {
		case c == '_' || c == '$' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'):
		case (c >= '0' && c <= '9') || c == '-':
			if i == 0 {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// schema is the shape as JSON Schema, for typegen, as declared to the
// caller whose tenant's tag is viewer: the properties it may be declared
// (declaredTo) and no others.
func (s *shape) schema(viewer string) map[string]any {
	if s == nil || s.Kinds == 0 || s.Kinds&kAny != 0 {
		return map[string]any{}
	}
	var alts []map[string]any
	var plain []string
	for _, k := range []struct {
		bit  kinds
		name string
	}{{kString, "string"}, {kNumber, "number"}, {kBool, "boolean"}, {kNull, "null"}} {
		if s.Kinds&k.bit != 0 {
			plain = append(plain, k.name)
		}
	}
	if s.Kinds&kObject != 0 {
		obj := map[string]any{"type": "object"}
		switch {
		case s.Map != nil:
			obj["additionalProperties"] = s.Map.schema(viewer)
		default:
			props := map[string]any{}
			var required []string
			for k, p := range s.Props {
				if !identifierLike(k) || !p.declaredTo(viewer) { // checked when read too: a second look costs nothing
					continue
				}
				props[k] = p.schema(viewer)
				if p.Seen >= s.Objects {
					required = append(required, k)
				}
			}
			sort.Strings(required)
			obj["properties"] = props
			if len(required) > 0 {
				obj["required"] = required
			}
		}
		alts = append(alts, obj)
	}
	if s.Kinds&kArray != 0 {
		alts = append(alts, map[string]any{"type": "array", "items": s.Items.schema(viewer)})
	}
	switch {
	case len(alts) == 0 && len(plain) == 1:
		return map[string]any{"type": plain[0]}
	case len(alts) == 0:
		return map[string]any{"type": plain}
	case len(plain) == 0 && len(alts) == 1:
		return alts[0]
	}
	var anyOf []any
	for _, a := range alts {
		anyOf = append(anyOf, a)
	}
	for _, p := range plain {
		anyOf = append(anyOf, map[string]any{"type": p})
	}
	return map[string]any{"anyOf": anyOf}
}

// checked makes a shape read back (from shapes.json, or the pool in
// Redis, which anyone who can write there could have planted) one that
// folding results could have made: kinds it knows, counts not below zero,
// no key that is no identifier (folding keeps none: such a key, and what
// is under it, was planted and is dropped), an object with more than
// maxShapeKeys keys kept as a map, nothing below maxShapeDepth, producer
// tags of a tag's size (sharedFromTenants of them: shared).
func (s *shape) checked(depth int) {
	s.Kinds &= kNull | kBool | kNumber | kString | kArray | kObject | kAny
	s.Seen, s.Objects = max(s.Seen, 0), max(s.Objects, 0)
	if depth >= maxShapeDepth {
		if s.Kinds != 0 {
			s.Kinds = kAny
		}
		s.Props, s.Map, s.Items = nil, nil, nil
		return
	}
	for k, p := range s.Props {
		if p == nil || !identifierLike(k) { // never folded in: planted
			delete(s.Props, k)
		}
	}
	if len(s.Props) > maxShapeKeys {
		s.toMap()
	}
	for _, p := range s.Props {
		p.checked(depth + 1)
		by := p.By
		p.By = nil
		for _, tag := range by {
			if len(tag) <= maxProducerTag {
				p.producedBy(tag)
			}
		}
	}
	for _, c := range []*shape{s.Map, s.Items} {
		if c != nil {
			c.checked(depth + 1)
			c.By, c.Shared = nil, false // only a property has producers
		}
	}
}

var errShapeSyntax = errors.New("not JSON")

// jsonScanner walks JSON text without building values.
type jsonScanner struct {
	b []byte
	i int
}

func (sc *jsonScanner) space() {
	for sc.i < len(sc.b) && (sc.b[sc.i] == ' ' || sc.b[sc.i] == '\n' || sc.b[sc.i] == '\r' || sc.b[sc.i] == '\t') {
		sc.i++
	}
}

// eat skips spaces and consumes c if it comes next, reporting whether it did.
func (sc *jsonScanner) eat(c byte) bool {
	sc.space()
	if sc.i < len(sc.b) && sc.b[sc.i] == c {
		sc.i++
		return true
	}
	return false
}

// key reads an object key and the colon after it.
func (sc *jsonScanner) key() (string, error) {
	sc.space()
	if sc.i >= len(sc.b) || sc.b[sc.i] != '"' {
		return "", errShapeSyntax
	}
	k, err := sc.str(true)
	if err != nil {
		return "", err
	}
	if !sc.eat(':') {
		return "", errShapeSyntax
	}
	return k, nil
}

// str reads a string at sc.i; it returns its text only when want is set.
func (sc *jsonScanner) str(want bool) (string, error) {
	start := sc.i
	sc.i++
	escaped := false
	for sc.i < len(sc.b) {
		switch sc.b[sc.i] {
		case '\\':
			escaped = true
			sc.i += 2
			continue
		case '"':
			sc.i++
			if !want {
				return "", nil
			}
			raw := sc.b[start:sc.i]
			if !escaped {
				return string(raw[1 : len(raw)-1]), nil
			}
			s, err := strconv.Unquote(string(raw))
			if err != nil || !utf8.ValidString(s) {
				var out string
				if json.Unmarshal(raw, &out) != nil {
					return "", errShapeSyntax
				}
				return out, nil
			}
			return s, nil
		}
		sc.i++
	}
	return "", errShapeSyntax
}

// skip steps over one value.
func (sc *jsonScanner) skip() error {
	sc.space()
	if sc.i >= len(sc.b) {
		return errShapeSyntax
	}
	switch sc.b[sc.i] {
	case '"':
		_, err := sc.str(false)
		return err
	case '{', '[':
		depth := 0
		for sc.i < len(sc.b) {
			switch sc.b[sc.i] {
			case '"':
				if _, err := sc.str(false); err != nil {
					return err
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					sc.i++
					return nil
				}
			}
			sc.i++
		}
		return errShapeSyntax
	}
	for sc.i < len(sc.b) {
		switch sc.b[sc.i] {
		case ',', '}', ']', ' ', '\n', '\r', '\t':
			return nil
		}
		sc.i++
	}
	return nil
}

// shapeBook holds the learned shape of each tool that declares no output
// schema, keyed by tool id and its definition's hash: a changed definition
// starts over. With a directory, it is kept in shapes.json there (beside
// the search index) and survives restarts. With a ShapeStore (replicas),
// what it learns is pooled there instead, every saveInterval (save).
type shapeBook struct {
	mu    sync.Mutex
	tools map[shapeKey]*learned
	path  string
	dirty bool

	shared  ShapeStore
	pending map[string]*learned // catalog tools' (by id), learned here since the last pooling
	version int64               // of the pool, as of the last pooling
}

// shapeKey is what a learned shape belongs to: a catalog tool, by its id,
// or a saved script, by its name. A saved script is its principal's, so its
// shape is never pooled with other replicas, and it is not in the catalog,
// so a catalog change does not forget it (its definition hash changes when
// the script does).
type shapeKey struct {
	script bool
	name   string // the tool's id, or the script's name
}

func toolShape(id string) shapeKey     { return shapeKey{name: id} }
func scriptShape(name string) shapeKey { return shapeKey{script: true, name: name} }

// scriptShapePrefix starts a saved script's key in shapes.json: no catalog
// tool has such an id, since no server may be named ScriptNamespace.
const scriptShapePrefix = ScriptNamespace + ":"

// MarshalText is the key as shapes.json spells it: the tool's id, or
// "scripts:<name>". This and UnmarshalText are the file's format, and the
// only places that know it.
func (k shapeKey) MarshalText() ([]byte, error) {
	if k.script {
		return []byte(scriptShapePrefix + k.name), nil
	}
	return []byte(k.name), nil
}

// UnmarshalText reads a key of shapes.json.
func (k *shapeKey) UnmarshalText(text []byte) error {
	name, script := strings.CutPrefix(string(text), scriptShapePrefix)
	*k = shapeKey{script: script, name: name}
	return nil
}

// ShapeStore pools the result types that replicas learn from the calls
// they serve, so that every replica declares what all of them learned.
// Entries are opaque to it, one per tool; the default (none) keeps each
// process's own in shapes.json. Redis implements it (state/redisstate).
type ShapeStore interface {
	// Update replaces the entry of key with update(current) (current nil:
	// none yet), atomically against other replicas' updates of it. A store
	// may refuse entries past a size, or new keys past a count.
	Update(ctx context.Context, key string, update func(current []byte) ([]byte, error)) error
	// Changes returns the entries updated since version since (every
	// entry for 0) and the store's version now, so that a replica reads
	// only what changed.
	Changes(ctx context.Context, since int64) (entries map[string][]byte, version int64, err error)
}

type learned struct {
	Def   string `json:"def"` // hash of the tool's definition
	Calls int    `json:"calls"`
	Shape *shape `json:"shape"`
}

// readLearned decodes a learned shape read back (the pool's entries), checked
// as folding results would have made it; false when it is none.
func readLearned(raw []byte) (*learned, bool) {
	var l learned
	if json.Unmarshal(raw, &l) != nil || !l.check() {
		return nil, false
	}
	return &l, true
}

// check makes a learned shape read back fit to declare (shape.checked);
// false when it holds none.
func (l *learned) check() bool {
	if l == nil || l.Shape == nil {
		return false
	}
	l.Calls = max(l.Calls, 0)
	l.Shape.checked(0)
	return true
}

const shapesFile = "shapes.json"

// newSharedShapeBook is a shapeBook whose shapes are pooled in shared
// (taken from there at once, as far as it answers).
func newSharedShapeBook(shared ShapeStore) (*shapeBook, error) {
	b := &shapeBook{tools: map[shapeKey]*learned{}, shared: shared, pending: map[string]*learned{}}
	return b, b.pool()
}

func newShapeBook(dir string) *shapeBook {
	b := &shapeBook{tools: map[shapeKey]*learned{}}
	if dir == "" {
		return b
	}
	b.path = filepath.Join(dir, shapesFile)
	data, err := os.ReadFile(b.path)
	if err == nil {
		var f struct {
			Version int                   `json:"version"`
			Tools   map[shapeKey]*learned `json:"tools"`
		}
		if json.Unmarshal(data, &f) == nil && f.Version == 1 && f.Tools != nil {
			for key, l := range f.Tools {
				if l.check() {
					b.tools[key] = l
				}
			}
		}
	}
	return b
}

// definitionHash identifies a tool definition: the shape of its results
// is learned again when it changes.
func definitionHash(t typegen.Tool) string {
	h := fnv.New64a()
	data, _ := json.Marshal(t)
	h.Write(data)
	return strconv.FormatUint(h.Sum64(), 36)
}

// observe folds one result of a tool or script, a result of the tenant
// tagged by (shapeProducer), into its shape.
func (b *shapeBook) observe(key shapeKey, def string, result []byte, by string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	l := b.tools[key]
	if l == nil || l.Def != def {
		l = &learned{Def: def, Shape: &shape{}}
		b.tools[key] = l
	}
	if err := l.Shape.absorb(&jsonScanner{b: result}, 0, by); err != nil {
		// Results are checked JSON (runtime.DecodeResult); if one is not,
		// what it half-taught is dropped with the rest.
		delete(b.tools, key)
		return
	}
	l.Calls++
	b.dirty = true
	if b.shared != nil && !key.script { // the same, apart, for the pool (saved scripts are their principal's: kept here)
		p := b.pending[key.name]
		if p == nil || p.Def != def {
			p = &learned{Def: def, Shape: &shape{}}
			b.pending[key.name] = p
		}
		_ = p.Shape.absorb(&jsonScanner{b: result}, 0, by)
		p.Calls++
	}
}

// lookup returns a tool's or script's learned shape as a JSON Schema, as
// declared to the caller whose tenant's tag is viewer (shapeProducer), and
// the number of calls it was learned from; nil when none.
func (b *shapeBook) lookup(key shapeKey, def, viewer string) (json.RawMessage, int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	l := b.tools[key]
	if l == nil || l.Def != def || l.Calls == 0 {
		return nil, 0
	}
	data, err := json.Marshal(l.Shape.schema(viewer))
	if err != nil {
		return nil, 0
	}
	return data, l.Calls
}

// forget drops the shapes of tools no longer in the catalog.
func (b *shapeBook) forget(keep map[string]int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for key := range b.tools {
		if key.script {
			continue // saved scripts are not in the catalog
		}
		if _, ok := keep[key.name]; !ok {
			delete(b.tools, key)
			b.dirty = true
		}
	}
}

// save writes shapes.json if anything changed since the last save; with a
// ShapeStore, it pools what was learned here since the last time and takes
// back what every replica learned.
func (b *shapeBook) save() error {
	if b.shared != nil {
		return b.pool()
	}
	b.mu.Lock()
	if b.path == "" || !b.dirty {
		b.mu.Unlock()
		return nil
	}
	data, err := json.Marshal(map[string]any{"version": 1, "tools": b.tools})
	b.dirty = false
	b.mu.Unlock()
	if err != nil {
		return err
	}
	if err := writeFileAtomic(b.path, data); err != nil {
		return fmt.Errorf("saving learned result types: %w", err)
	}
	return nil
}

// pool merges the shapes learned here since the last pooling into the
// shared ones, then replaces this book's shapes with the shared ones.
func (b *shapeBook) pool() error {
	b.mu.Lock()
	pending := b.pending
	b.pending = map[string]*learned{}
	b.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var errs []error
	for id, mine := range pending {
		err := b.shared.Update(ctx, id, func(cur []byte) ([]byte, error) {
			l, ok := readLearned(cur)
			if !ok || l.Def != mine.Def {
				// None yet, unreadable, or learned from another definition of
				// the tool: this replica's catalog is the one it serves.
				return json.Marshal(mine)
			}
			l.Shape.merge(mine.Shape)
			l.Calls += mine.Calls
			return json.Marshal(l)
		})
		if err != nil {
			errs = append(errs, err)
			b.mu.Lock()
			if b.pending[id] == nil { // keep it for the next round
				b.pending[id] = mine
			}
			b.mu.Unlock()
		}
	}
	b.mu.Lock()
	since := b.version
	b.mu.Unlock()
	changed, version, err := b.shared.Changes(ctx, since)
	if err != nil {
		return errors.Join(append(errs, fmt.Errorf("reading the result types replicas learned: %w", err))...)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.version = version
	for id, raw := range changed {
		if l, ok := readLearned(raw); ok {
			b.tools[toolShape(id)] = l
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("pooling learned result types: %w", errors.Join(errs...))
	}
	return nil
}

// WithLearnedOutputs returns tools with the result types learned by a code
// mode engine whose index directory is dir (its shapes.json), or by the
// replicas pooling them in shared, for tools that declare no output
// schema; `sandbox types --config` uses it to declare what search_tools
// declares to the operator (the keys of its own calls' results, and those
// shared by two tenants' results).
func WithLearnedOutputs(dir string, shared ShapeStore, tools []typegen.Tool) ([]typegen.Tool, error) {
	book := newShapeBook(dir)
	if shared != nil {
		var err error
		if book, err = newSharedShapeBook(shared); err != nil {
			return nil, err
		}
	} else if dir == "" {
		return tools, nil
	}
	out := make([]typegen.Tool, len(tools))
	for i, t := range tools {
		if len(t.OutputSchema) == 0 {
			t.InferredOutput, t.InferredFrom = book.lookup(toolShape(t.ID()), definitionHash(t), shapeProducer(auth.Operator()))
		}
		out[i] = t
	}
	return out, nil
}
