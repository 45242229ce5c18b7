package typegen

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// This file turns one JSON Schema document (a tool's inputSchema or
// outputSchema) into TypeScript. Every $ref target becomes a named type in the
// tool's own namespace, so recursion is expressed by name and nothing is ever
// expanded twice; the walk itself only follows the (depth-bounded) tree.
//
// TypeScript rejects a type alias that refers to itself without going through
// an object or array ("type A = B | string; type B = A"). Such head cycles are
// detected, reported as problems, and the closing reference degrades to
// unknown.

// Operator precedence of a rendered type, to know when to parenthesize.
const (
	precUnion = iota
	precIntersection
	precPrimary
)

type tsType struct {
	text string
	prec int
	refs bool // mentions a named type (then Record<string, T> would be unsafe in recursive aliases)
	top  bool // unknown, possibly with a comment: absorbs unions, vanishes in intersections
	bot  bool // never: vanishes in unions, absorbs intersections
}

var (
	tUnknown = tsType{text: "unknown", prec: precPrimary, top: true}
	tNever   = tsType{text: "never", prec: precPrimary, bot: true}
)

var (
	pointerEscaper   = strings.NewReplacer("~", "~0", "/", "~1")
	pointerUnescaper = strings.NewReplacer("~1", "/", "~0", "~")
)

// path is a JSON pointer built lazily: most nodes never need theirs spelled out.
type path struct {
	parent *path
	seg    string
}

func (p *path) child(seg string) *path { return &path{parent: p, seg: seg} }

// child allocates path nodes from a slab: one is made for every schema node
// walked, and almost none is ever printed.
func (c *converter) child(p *path, seg string) *path {
	if len(c.paths) == cap(c.paths) {
		c.paths = make([]path, 0, 64)
	}
	c.paths = append(c.paths, path{parent: p, seg: seg})
	return &c.paths[len(c.paths)-1]
}

func (p *path) String() string {
	if p == nil {
		return ""
	}
	var segs []string
	for q := p; q != nil; q = q.parent {
		segs = append(segs, q.seg)
	}
	var b strings.Builder
	for i := len(segs) - 1; i >= 0; i-- {
		if segs[i] == "" && i == len(segs)-1 {
			continue // the root's empty segment
		}
		b.WriteByte('/')
		b.WriteString(pointerEscaper.Replace(segs[i]))
	}
	return b.String()
}

// document is one schema with its root and the pointer prefix of problems.
type document struct {
	root     *jsonValue
	at       *path // "/inputSchema" or "/outputSchema"
	rootName string
	anchors  map[string]*jsonValue // built on the first "#name" ref
	id       string                // the root's $id, so "<$id>#/..." refs resolve
}

// namedType is a declaration in the tool's namespace.
type namedType struct {
	name string
	node *jsonValue
	doc  *document
	at   *path
	decl string // rendered, set once emitted
}

// converter renders the schemas of one tool. It is not safe for concurrent use.
type converter struct {
	toolID   string
	maxDoc   int
	problems []Problem
	names    map[string]bool // type names taken in the tool namespace
	named    map[*jsonValue]*namedType
	order    []*namedType // declaration order
	heads    map[*jsonValue][]*jsonValue
	docs     []*document
	expanded int // properties written by required-variant expansion, bounded

	// qual prefixes named-type references rendered outside the tool's
	// namespace (the inline input parameter): "listCommits.".
	qual string
	// rootRefs counts refs to a document root, which then needs its name.
	rootRefs map[*jsonValue]bool

	scc     map[*jsonValue]int // strongly connected component of each ref target
	nextSCC int

	paths []path // slab for child
}

func newConverter(toolID string, maxDoc int) *converter {
	return &converter{
		toolID: toolID,
		maxDoc: maxDoc,
		names:  map[string]bool{},
		named:  map[*jsonValue]*namedType{},
	}
}

func (c *converter) problem(at *path, format string, args ...any) {
	c.problems = append(c.problems, Problem{Tool: c.toolID, Pointer: at.String(), Message: fmt.Sprintf(format, args...)})
}

// uniqueName reserves a type name in the tool namespace.
func (c *converter) uniqueName(base string) string {
	name := base
	for n := 2; c.names[name]; n++ {
		name = base + "_" + strconv.Itoa(n)
	}
	c.names[name] = true
	return name
}

// addRoot registers a document whose root is named rootName. The root is
// declared now when declare is set, otherwise only if a $ref needs its name
// (see declareRoot).
func (c *converter) addRoot(root *jsonValue, at *path, rootName string, declare bool) *namedType {
	d := &document{root: root, at: at, rootName: rootName}
	if id := root.get("$id"); id != nil && id.kind == jsonString {
		d.id = strings.TrimSuffix(id.str, "#")
	}
	c.docs = append(c.docs, d)
	c.names[rootName] = true
	nt := &namedType{name: rootName, node: root, doc: d, at: at}
	c.named[root] = nt
	if declare {
		c.order = append(c.order, nt)
	}
	return nt
}

// declareRoot declares a root that was rendered inline, first in its
// namespace, because a $ref inside the schema points at it.
func (c *converter) declareRoot(nt *namedType) {
	c.order = append([]*namedType{nt}, c.order...)
}

// emitAll renders every named type reachable from the roots, in discovery order.
func (c *converter) emitAll(indent int) {
	for i := 0; i < len(c.order); i++ {
		nt := c.order[i]
		if nt.decl == "" {
			nt.decl = c.declare(nt, indent)
		}
	}
}

// declare renders one named type as an interface (plain objects) or an alias.
func (c *converter) declare(nt *namedType, indent int) string {
	var b strings.Builder
	ind := strings.Repeat("\t", indent)
	schemaDoc(nt.node, c.maxDoc).writeLead(&b, ind)
	if isPlainObject(nt.node) {
		b.WriteString("interface ")
		b.WriteString(nt.name)
		b.WriteByte(' ')
		b.WriteString(c.objectBody(nt.node, nt.doc, nt.at, indent, true))
		b.WriteByte('\n')
		return b.String()
	}
	t := c.typeOf(nt.node, nt.doc, nt.at, indent, heads{head: nt})
	b.WriteString("type ")
	b.WriteString(nt.name)
	b.WriteString(" = ")
	b.WriteString(t.text)
	b.WriteString(";\n")
	return b.String()
}

// isPlainObject: an object schema with nothing that needs a union or an
// intersection, which can be declared as an interface.
func isPlainObject(s *jsonValue) bool {
	if !s.isObject() {
		return false
	}
	for _, k := range []string{"$ref", "$dynamicRef", "$recursiveRef", "allOf", "anyOf", "oneOf", "enum", "const", "nullable"} {
		if s.get(k) != nil {
			return false
		}
	}
	t := s.get("type")
	if t == nil {
		return s.get("properties") != nil
	}
	return t.kind == jsonString && t.str == "object"
}

// heads says whether a schema is at the top of a named type's alias body,
// for cycle detection (see headReaches). head: s is at the top, through
// unions, intersections and refs. inTuple: s is also inside a tuple that is
// at the top. TypeScript resolves such tuples eagerly, element types and all
// ("type A = X & [string, ...[A][]]" circularly references itself), so inside
// them only an object type protects a recursive reference; plain arrays do
// too outside tuples ("type A = X & A[]" is fine). This is stricter than
// TypeScript in a few shapes ("type A = X & [string, [A]]" compiles), which
// then degrade to unknown; real schemas do not recurse through tuples.
type heads struct {
	head    *namedType
	inTuple bool
}

// typeOf renders schema s at the position described by h.
func (c *converter) typeOf(s *jsonValue, d *document, at *path, indent int, h heads) tsType {
	if s == nil {
		return tUnknown
	}
	switch s.kind {
	case jsonBool:
		if s.boolean {
			return tUnknown
		}
		return tNever
	case jsonObject:
	default:
		c.problem(at, "a schema must be a JSON object or a boolean, not %s; the type degrades to unknown", kindName(s.kind))
		return tUnknown
	}

	var parts []tsType
	for _, key := range []string{"$ref", "$recursiveRef", "$dynamicRef"} {
		if r := s.get(key); r != nil {
			parts = append(parts, c.refType(r, d, c.child(at, key), h))
		}
	}

	own, ownOK := c.ownType(s, d, at, indent, h)
	anyOf, oneOf := s.get("anyOf"), s.get("oneOf")

	// {"properties": {...}, "anyOf": [{"required": ["a"]}, {"required": ["b"]}]}
	// (at least one of a, b) becomes one object type per variant.
	if ownOK && isObjectSchema(s) && anyOf != nil && oneOf == nil && requiredOnlyVariants(anyOf) {
		if t, ok := c.requiredVariants(s, anyOf, d, at, indent); ok {
			own, anyOf = t, nil
		}
	} else if ownOK && isObjectSchema(s) && oneOf != nil && anyOf == nil && requiredOnlyVariants(oneOf) {
		if t, ok := c.requiredVariants(s, oneOf, d, at, indent); ok {
			own, oneOf = t, nil
		}
	}
	if ownOK && !(len(parts) > 0 || s.get("allOf") != nil || anyOf != nil || oneOf != nil) || ownOK && !isBareObject(s) {
		parts = append(parts, own)
	}
	if all := s.get("allOf"); all != nil {
		items := c.schemaList(all, c.child(at, "allOf"))
		for i, it := range items {
			t := c.typeOf(it, d, c.child(at, "allOf").child(strconv.Itoa(i)), indent, h)
			parts = append(parts, withDoc(t, schemaDoc(it, c.maxDoc)))
		}
	}
	for _, comb := range []struct {
		key  string
		list *jsonValue
	}{{"anyOf", anyOf}, {"oneOf", oneOf}} {
		if comb.list == nil {
			continue
		}
		items := c.schemaList(comb.list, c.child(at, comb.key))
		var members []tsType
		for i, it := range items {
			t := c.typeOf(it, d, c.child(at, comb.key).child(strconv.Itoa(i)), indent, h)
			members = append(members, withDoc(t, schemaDoc(it, c.maxDoc)))
		}
		if comb.list.kind == jsonArray && len(items) == 0 {
			members = append(members, tNever) // anyOf: [] matches nothing
		}
		if len(members) > 0 {
			parts = append(parts, union(members))
		}
	}
	t := intersection(parts)
	if n := s.get("nullable"); n != nil && n.kind == jsonBool && n.boolean && !t.top {
		t = union([]tsType{t, {text: "null", prec: precPrimary}})
	}
	return t
}

// schemaList reads the array of an allOf/anyOf/oneOf/prefixItems.
func (c *converter) schemaList(v *jsonValue, at *path) []*jsonValue {
	if v.kind != jsonArray {
		c.problem(at, "must be an array of schemas, not %s; it is ignored", kindName(v.kind))
		return nil
	}
	return v.items
}

// isArraySchema: the schema would render as an array or tuple type.
func isArraySchema(s *jsonValue) bool {
	t := s.get("type")
	if t == nil {
		return hasAny(s, "items", "prefixItems", "additionalItems", "minItems", "maxItems", "uniqueItems", "contains") &&
			!hasAny(s, "properties", "additionalProperties", "patternProperties", "required", "propertyNames", "minProperties", "maxProperties", "const", "enum")
	}
	return hasTypeName(t, "array") && s.get("const") == nil && s.get("enum") == nil
}

// isBareObject: {"type": "object"} and nothing about its members. Next to a
// $ref or a combinator it adds nothing but noise (and an index signature that
// would switch off excess-property checks), so it is left out there.
func isBareObject(s *jsonValue) bool {
	return isObjectSchema(s) && !hasAny(s, "properties", "additionalProperties", "patternProperties", "required", "const", "enum")
}

func isObjectSchema(s *jsonValue) bool {
	t := s.get("type")
	if t == nil {
		return s.get("properties") != nil
	}
	return t.kind == jsonString && t.str == "object"
}

// ownType renders what s says by itself (type, enum, const, object and array
// keywords), without $ref and combinators. ok is false when s says nothing of
// its own, so that the result is only what the combinators say.
func (c *converter) ownType(s *jsonValue, d *document, at *path, indent int, h heads) (tsType, bool) {
	if v := s.get("const"); v != nil {
		return tsType{text: literal(v), prec: precPrimary}, true
	}
	typ := s.get("type")
	if e := s.get("enum"); e != nil {
		if e.kind != jsonArray {
			c.problem(c.child(at, "enum"), "enum must be an array, not %s; it is ignored", kindName(e.kind))
		} else {
			var members []tsType
			for _, v := range e.items {
				if typ == nil || valueHasType(v, typ) {
					members = append(members, tsType{text: literal(v), prec: precPrimary})
				}
			}
			if len(members) == 0 {
				return tNever, true
			}
			return union(members), true
		}
	}
	var types []string
	if typ != nil {
		switch typ.kind {
		case jsonString:
			types = []string{typ.str}
		case jsonArray:
			for i, it := range typ.items {
				if it.kind != jsonString {
					c.problem(c.child(at, "type").child(strconv.Itoa(i)), "a type name must be a string, not %s; it is ignored", kindName(it.kind))
					continue
				}
				types = append(types, it.str)
			}
		default:
			c.problem(c.child(at, "type"), "type must be a string or an array of strings, not %s; it is ignored", kindName(typ.kind))
		}
	}
	if typ == nil {
		switch {
		case hasAny(s, "properties", "additionalProperties", "patternProperties", "required", "propertyNames", "minProperties", "maxProperties"):
			types = []string{"object"}
		case hasAny(s, "items", "prefixItems", "additionalItems", "minItems", "maxItems", "uniqueItems", "contains"):
			types = []string{"array"}
		default:
			return tsType{}, false
		}
	}
	var members []tsType
	for _, name := range types {
		switch name {
		case "string":
			members = append(members, tsType{text: "string", prec: precPrimary})
		case "number", "integer":
			members = append(members, tsType{text: "number", prec: precPrimary})
		case "boolean":
			members = append(members, tsType{text: "boolean", prec: precPrimary})
		case "null":
			members = append(members, tsType{text: "null", prec: precPrimary})
		case "array":
			members = append(members, c.arrayType(s, d, at, indent, h))
		case "object":
			members = append(members, tsType{text: c.objectBody(s, d, at, indent, false), prec: precPrimary, refs: true})
		default:
			c.problem(c.child(at, "type"), "unknown type %q (expected string, number, integer, boolean, null, array or object); it degrades to unknown", name)
			members = append(members, tUnknown)
		}
	}
	if len(members) == 0 {
		return tsType{}, false
	}
	return union(members), true
}

func hasAny(s *jsonValue, keys ...string) bool {
	for _, k := range keys {
		if s.get(k) != nil {
			return true
		}
	}
	return false
}

// valueHasType reports whether an enum value fits the schema's type keyword.
func valueHasType(v *jsonValue, typ *jsonValue) bool {
	var name string
	switch v.kind {
	case jsonNull:
		name = "null"
	case jsonBool:
		name = "boolean"
	case jsonNumber:
		name = "number"
	case jsonString:
		name = "string"
	case jsonArray:
		name = "array"
	case jsonObject:
		name = "object"
	}
	switch typ.kind {
	case jsonString:
		return typ.str == name || (name == "number" && typ.str == "integer")
	case jsonArray:
		for _, t := range typ.items {
			if t.kind == jsonString && (t.str == name || (name == "number" && t.str == "integer")) {
				return true
			}
		}
		return false
	}
	return true
}

// arrayType renders items/prefixItems (2020-12) and items-as-array/additionalItems (draft-07).
func (c *converter) arrayType(s *jsonValue, d *document, at *path, indent int, h heads) tsType {
	items := s.get("items")
	prefix := s.get("prefixItems")
	rest := items
	restAt := c.child(at, "items")
	if prefix == nil && items != nil && items.kind == jsonArray {
		prefix, rest, restAt = items, s.get("additionalItems"), c.child(at, "additionalItems")
	}
	if prefix != nil {
		prefixAt := c.child(at, "prefixItems")
		if prefix == items {
			prefixAt = c.child(at, "items")
		}
		elems := c.schemaList(prefix, prefixAt)
		// A tuple at the top keeps its elements at the top (see heads).
		elemHeads := heads{}
		if h.head != nil {
			elemHeads = heads{head: h.head, inTuple: true}
		}
		restHeads := elemHeads
		minItems := 0
		if m := s.get("minItems"); m != nil && m.kind == jsonNumber {
			if n, err := strconv.Atoi(m.str); err == nil {
				minItems = n
			}
		}
		var b strings.Builder
		b.WriteByte('[')
		refs := false
		for i, e := range elems {
			if i > 0 {
				b.WriteString(", ")
			}
			t := withDoc(c.typeOf(e, d, c.child(prefixAt, strconv.Itoa(i)), indent, elemHeads), schemaDoc(e, c.maxDoc))
			refs = refs || t.refs
			if i >= minItems {
				b.WriteString(paren(t, precPrimary))
				b.WriteByte('?')
			} else {
				b.WriteString(t.text)
			}
		}
		if rest == nil || !(rest.kind == jsonBool && !rest.boolean) {
			rt := c.typeOf(rest, d, restAt, indent, restHeads)
			if rest != nil {
				rt = withDoc(rt, schemaDoc(rest, c.maxDoc))
			}
			refs = refs || rt.refs
			if len(elems) > 0 {
				b.WriteString(", ")
			}
			b.WriteString("...")
			b.WriteString(paren(rt, precPrimary))
			b.WriteString("[]")
		}
		b.WriteByte(']')
		return tsType{text: b.String(), prec: precPrimary, refs: refs}
	}
	if items == nil {
		return tsType{text: "unknown[]", prec: precPrimary}
	}
	itemHeads := heads{}
	if h.inTuple {
		itemHeads = h // arrays inside a top-level tuple do not protect
	}
	et := withDoc(c.typeOf(items, d, c.child(at, "items"), indent, itemHeads), schemaDoc(items, c.maxDoc))
	return tsType{text: paren(et, precPrimary) + "[]", prec: precPrimary, refs: et.refs}
}

// objectBody renders the braces of an object type or interface.
//
// Declared properties come in the schema's order. An object that declares
// properties but says nothing about additionalProperties is treated as
// closed: the agent gets excess-property checks for typos, and servers ignore
// or reject unknown arguments anyway. An object that declares nothing is
// open (Record<string, unknown>).
func (c *converter) objectBody(s *jsonValue, d *document, at *path, indent int, iface bool) string {
	return c.objectShape(s, d, at, indent, nil).render(indent, iface)
}

// objectShape is what an object schema declares, worked out before it is
// written: its properties and its index signature.
type objectShape struct {
	members  []objectMember
	hasIndex bool
	index    tsType  // the index signature's value type, when hasIndex
	indexDoc docInfo // what the index signature's keys may be
}

// objectMember is one property of an object type.
type objectMember struct {
	doc      docInfo
	key      string
	optional bool
	t        tsType
}

// objectShape works out the members and index signature of object schema s.
// extraRequired makes more properties required (requiredVariants renders one
// object per variant this way).
func (c *converter) objectShape(s *jsonValue, d *document, at *path, indent int, extraRequired map[string]bool) objectShape {
	props := s.get("properties")
	propsAt := c.child(at, "properties")
	if props != nil && props.kind != jsonObject {
		c.problem(propsAt, "properties must be an object, not %s; it is ignored", kindName(props.kind))
		props = nil
	}
	required, requiredOrder := c.requiredProperties(s, at, extraRequired)

	var sh objectShape
	declared := map[string]bool{}
	if props != nil {
		for _, m := range props.members {
			declared[m.key] = true
			t := c.typeOf(m.value, d, c.child(propsAt, m.key), indent+1, heads{})
			sh.members = append(sh.members, objectMember{doc: schemaDoc(m.value, c.maxDoc), key: m.key, optional: !required[m.key], t: t})
		}
	}
	for _, name := range requiredOrder {
		if !declared[name] {
			sh.members = append(sh.members, objectMember{key: name, t: tUnknown})
		}
	}

	var index []tsType
	index, sh.indexDoc = c.indexSignature(s, d, at, indent, props == nil || len(props.members) == 0)
	if len(index) > 0 {
		sh.hasIndex = true
		sh.index = widenIndex(index, sh.members)
	}
	return sh
}

// requiredProperties reads s's required list, adding extra, in order and
// without repeats.
func (c *converter) requiredProperties(s *jsonValue, at *path, extra map[string]bool) (map[string]bool, []string) {
	required := map[string]bool{}
	var order []string
	if r := s.get("required"); r != nil {
		if r.kind != jsonArray {
			c.problem(c.child(at, "required"), "required must be an array of property names, not %s; it is ignored", kindName(r.kind))
		} else {
			for i, it := range r.items {
				if it.kind != jsonString {
					c.problem(c.child(at, "required").child(strconv.Itoa(i)), "a required property name must be a string, not %s; it is ignored", kindName(it.kind))
					continue
				}
				if !required[it.str] {
					required[it.str] = true
					order = append(order, it.str)
				}
			}
		}
	}
	for name := range extra {
		if !required[name] {
			required[name] = true
			order = append(order, name)
		}
	}
	return required, order
}

// indexSignature gives the value types of s's index signature (none when the
// object is closed) and what its keys may be. noProperties says s declares no
// property, which leaves it open when additionalProperties is absent.
func (c *converter) indexSignature(s *jsonValue, d *document, at *path, indent int, noProperties bool) ([]tsType, docInfo) {
	var index []tsType
	open := false
	ap := s.get("additionalProperties")
	switch {
	case ap == nil:
		open = noProperties
	case ap.kind == jsonBool:
		open = ap.boolean
	case ap.kind == jsonObject && len(ap.members) == 0:
		open = true
	default:
		index = append(index, withDoc(c.typeOf(ap, d, c.child(at, "additionalProperties"), indent+1, heads{}), schemaDoc(ap, c.maxDoc)))
	}
	var patternDocs []string
	if pp := s.get("patternProperties"); pp != nil {
		if pp.kind != jsonObject {
			c.problem(c.child(at, "patternProperties"), "patternProperties must be an object, not %s; it is ignored", kindName(pp.kind))
		} else {
			for _, m := range pp.members {
				index = append(index, c.typeOf(m.value, d, c.child(at, "patternProperties").child(m.key), indent+1, heads{}))
				patternDocs = append(patternDocs, cleanTag(m.key, c.maxDoc))
			}
		}
	}
	if open {
		index = []tsType{tUnknown}
	}
	// What the keys of the index signature may be: patterns and propertyNames.
	var doc docInfo
	if len(patternDocs) > 0 {
		doc.text = "Keys matching " + strings.Join(patternDocs, " or ")
	}
	if pn := s.get("propertyNames"); pn.isObject() && len(index) > 0 {
		if pd := schemaDoc(pn, c.maxDoc); !pd.empty() {
			if pd.text != "" {
				doc.text = strings.TrimSpace(doc.text + " Keys: " + pd.text)
			}
			doc.tags = pd.tags
		}
	}
	return index, doc
}

// widenIndex is the type of an index signature with value types index
// beside members.
func widenIndex(index []tsType, members []objectMember) tsType {
	it := union(index)
	if it.top || len(members) == 0 {
		return it
	}
	// TypeScript requires every property to fit the index signature: widen it
	// to the union of all property types when that stays short, else to
	// unknown (repeating big property types here could grow the output
	// exponentially with nesting).
	all := append([]tsType{}, index...)
	optional := false
	for _, m := range members {
		all = append(all, m.t)
		optional = optional || m.optional
	}
	if optional {
		all = append(all, tsType{text: "undefined", prec: precPrimary})
	}
	it = union(all)
	if len(it.text) > maxIndexUnion || strings.Contains(it.text, "\n") {
		it = tUnknown
	}
	return it
}

// render writes the shape as TypeScript: braces on one line when short,
// else one member a line at indent; an interface body always takes braces.
func (sh objectShape) render(indent int, iface bool) string {
	members, indexType, indexDoc, hasIndex := sh.members, sh.index, sh.indexDoc, sh.hasIndex
	if len(members) == 0 && !iface {
		if !hasIndex {
			// additionalProperties: false and nothing declared: only {}.
			return "Record<string, never>"
		}
		if indexDoc.empty() && !indexType.refs {
			return "Record<string, " + indexType.text + ">"
		}
	}

	ind := strings.Repeat("\t", indent+1)
	multiline := iface || len(members) > 4 || !indexDoc.empty()
	width := 0
	for _, m := range members {
		width += len(m.key) + len(m.t.text) + 4
		if !m.doc.empty() || strings.Contains(m.t.text, "\n") {
			multiline = true
		}
	}
	if width+len(indexType.text) > maxInlineObject {
		multiline = true
	}
	var b strings.Builder
	grow := width + len(indexType.text) + 24
	for _, m := range members {
		grow += len(m.doc.text) + 16*len(m.doc.tags) + 2*indent + 12
	}
	b.Grow(grow)
	if !multiline {
		b.WriteString("{ ")
		for i, m := range members {
			if i > 0 {
				b.WriteString("; ")
			}
			b.WriteString(propertyKey(m.key))
			if m.optional {
				b.WriteByte('?')
			}
			b.WriteString(": ")
			b.WriteString(m.t.text)
		}
		if hasIndex {
			if len(members) > 0 {
				b.WriteString("; ")
			}
			b.WriteString("[key: string]: ")
			b.WriteString(indexType.text)
		}
		b.WriteString(" }")
		return b.String()
	}
	b.WriteString("{\n")
	for _, m := range members {
		m.doc.writeLead(&b, ind)
		b.WriteString(propertyKey(m.key))
		if m.optional {
			b.WriteByte('?')
		}
		b.WriteString(": ")
		b.WriteString(m.t.text)
		b.WriteString(";\n")
	}
	if hasIndex {
		indexDoc.writeLead(&b, ind)
		b.WriteString("[key: string]: ")
		b.WriteString(indexType.text)
		b.WriteString(";\n")
	}
	b.WriteString(strings.Repeat("\t", indent))
	b.WriteByte('}')
	return b.String()
}

// requiredOnlyVariants: every variant only lists required properties (plus
// documentation), the JSON Schema idiom for "at least one of".
func requiredOnlyVariants(list *jsonValue) bool {
	if list.kind != jsonArray || len(list.items) == 0 || len(list.items) > 16 {
		return false
	}
	for _, v := range list.items {
		if !v.isObject() || v.get("required") == nil {
			return false
		}
		for _, m := range v.members {
			switch m.key {
			case "required", "description", "title", "$comment":
			default:
				return false
			}
		}
		if r := v.get("required"); r.kind != jsonArray {
			return false
		}
	}
	return true
}

// maxInlineObject is the widest object type written on one line.
const maxInlineObject = 80

// maxIndexUnion bounds the widened index signature type (see widenIndex).
const maxIndexUnion = 160

// maxExpanded bounds the schema nodes re-rendered by required-variant
// expansion, which repeats the object once per variant, over a whole tool.
const maxExpanded = 4000

func (c *converter) requiredVariants(s, list *jsonValue, d *document, at *path, indent int) (tsType, bool) {
	n := countNodes(s, maxExpanded+1) * len(list.items)
	if c.expanded+n > maxExpanded {
		return tsType{}, false
	}
	c.expanded += n
	var members []tsType
	for _, v := range list.items {
		extra := map[string]bool{}
		for _, r := range v.get("required").items {
			if r.kind == jsonString {
				extra[r.str] = true
			}
		}
		members = append(members, withDoc(tsType{text: c.objectShape(s, d, at, indent, extra).render(indent, false), prec: precPrimary, refs: true}, schemaDoc(v, c.maxDoc)))
	}
	return union(members), true
}

// countNodes counts the JSON values in v, stopping at limit.
func countNodes(v *jsonValue, limit int) int {
	n := 1
	for _, it := range v.items {
		if n >= limit {
			return n
		}
		n += countNodes(it, limit-n)
	}
	for _, m := range v.members {
		if n >= limit {
			return n
		}
		n += countNodes(m.value, limit-n)
	}
	return n
}

// refType resolves a $ref to its named type.
func (c *converter) refType(r *jsonValue, d *document, at *path, h heads) tsType {
	head := h.head
	if r.kind != jsonString {
		c.problem(at, "$ref must be a string, not %s; the type degrades to unknown", kindName(r.kind))
		return tUnknown
	}
	target, why := c.resolve(d, r.str)
	if target == nil {
		c.problem(at, "%s; the type degrades to unknown", why)
		return tUnknown
	}
	if head != nil && c.headReaches(target, head.node, d) {
		if h.inTuple {
			c.problem(at, "$ref %q recurses through a tuple, which TypeScript resolves eagerly and cannot declare; the reference degrades to unknown", r.str)
		} else {
			c.problem(at, "$ref %q closes a cycle that never passes through an object or array, which no value can satisfy (and TypeScript cannot declare); the type degrades to unknown", r.str)
		}
		return tUnknown
	}
	if target == d.root {
		if c.rootRefs == nil {
			c.rootRefs = map[*jsonValue]bool{}
		}
		c.rootRefs[target] = true
	}
	nt := c.named[target]
	if nt == nil {
		nt = &namedType{name: c.uniqueName(typeNameBase(refBaseName(r.str))), node: target, doc: d, at: pointerPath(d.at, r.str)}
		c.named[target] = nt
		c.order = append(c.order, nt)
	}
	return tsType{text: c.qual + nt.name, prec: precPrimary, refs: true}
}

// pointerPath is the problem location of a ref target.
func pointerPath(base *path, ref string) *path {
	frag := ref[strings.IndexByte(ref, '#')+1:]
	p := base
	if !strings.HasPrefix(frag, "/") {
		return p
	}
	for _, seg := range strings.Split(frag[1:], "/") {
		if u, err := url.PathUnescape(seg); err == nil {
			seg = u
		}
		p = p.child(pointerUnescaper.Replace(seg))
	}
	return p
}

// refBaseName picks the type name of a ref target: its last pointer segment.
func refBaseName(ref string) string {
	frag := ref[strings.IndexByte(ref, '#')+1:]
	if i := strings.LastIndexByte(frag, '/'); i >= 0 {
		frag = frag[i+1:]
	}
	if u, err := url.PathUnescape(frag); err == nil {
		frag = u
	}
	return pointerUnescaper.Replace(frag)
}

// resolve finds the node a $ref points to inside document d. Only refs inside
// the same schema are followed: a tool's schema must be self-contained, and
// fetching anything else would let a server make us read files or the network.
func (c *converter) resolve(d *document, ref string) (*jsonValue, string) {
	frag := ref
	if d.id != "" && strings.HasPrefix(ref, d.id+"#") {
		frag = ref[len(d.id):]
	}
	if frag == "" || !strings.HasPrefix(frag, "#") {
		return nil, fmt.Sprintf("$ref %q points outside the schema; only refs inside it (like \"#/$defs/Name\") are supported, so inline the referenced schema", ref)
	}
	frag = frag[1:]
	if frag == "" {
		return d.root, ""
	}
	if !strings.HasPrefix(frag, "/") {
		if d.anchors == nil {
			d.anchors = map[string]*jsonValue{}
			collectAnchors(d.root, d.anchors, 0)
		}
		if t := d.anchors[frag]; t != nil {
			return t, ""
		}
		return nil, fmt.Sprintf("$ref %q names an anchor that no \"$anchor\" in the schema defines", ref)
	}
	node := d.root
	for _, seg := range strings.Split(frag[1:], "/") {
		if u, err := url.PathUnescape(seg); err == nil {
			seg = u
		}
		seg = pointerUnescaper.Replace(seg)
		switch {
		case node.kind == jsonObject:
			next := node.get(seg)
			if next == nil {
				return nil, fmt.Sprintf("$ref %q points nowhere: there is no %q at that place in the schema; fix the ref or add the definition", ref, seg)
			}
			node = next
		case node.kind == jsonArray:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(node.items) || (len(seg) > 1 && seg[0] == '0') {
				return nil, fmt.Sprintf("$ref %q points nowhere: %q is not an index of the array at that place", ref, seg)
			}
			node = node.items[i]
		default:
			return nil, fmt.Sprintf("$ref %q points nowhere: the path goes through a %s", ref, kindName(node.kind))
		}
	}
	return node, ""
}

func collectAnchors(v *jsonValue, into map[string]*jsonValue, depth int) {
	if depth > maxJSONDepth {
		return
	}
	switch v.kind {
	case jsonObject:
		for _, key := range []string{"$anchor", "$dynamicAnchor"} {
			if a := v.get(key); a != nil && a.kind == jsonString && into[a.str] == nil {
				into[a.str] = v
			}
		}
		if id := v.get("$id"); id != nil && id.kind == jsonString && strings.HasPrefix(id.str, "#") && into[id.str[1:]] == nil {
			into[id.str[1:]] = v // draft-07 plain-name fragment
		}
		for _, m := range v.members {
			collectAnchors(m.value, into, depth+1)
		}
	case jsonArray:
		for _, it := range v.items {
			collectAnchors(it, into, depth+1)
		}
	}
}

// headRefs lists the ref targets of s that its type would name at the top
// level (through allOf/anyOf/oneOf, not through properties or items).
func (c *converter) headRefs(s *jsonValue, d *document) []*jsonValue {
	if c.heads == nil {
		c.heads = map[*jsonValue][]*jsonValue{}
	}
	if refs, ok := c.heads[s]; ok {
		return refs
	}
	c.heads[s] = nil // guards re-entry; completed below
	var refs []*jsonValue
	// walk mirrors typeOf's heads: it only visits top-level positions.
	var walk func(n *jsonValue, depth int, inTuple bool)
	walk = func(n *jsonValue, depth int, inTuple bool) {
		if !n.isObject() || depth > maxJSONDepth {
			return
		}
		for _, key := range []string{"$ref", "$recursiveRef", "$dynamicRef"} {
			if r := n.get(key); r != nil && r.kind == jsonString {
				if t, _ := c.resolve(d, r.str); t != nil {
					refs = append(refs, t)
				}
			}
		}
		for _, key := range []string{"allOf", "anyOf", "oneOf"} {
			if l := n.get(key); l != nil && l.kind == jsonArray {
				for _, it := range l.items {
					walk(it, depth+1, inTuple)
				}
			}
		}
		if !isArraySchema(n) {
			return
		}
		items, prefix := n.get("items"), n.get("prefixItems")
		rest := items
		if prefix == nil && items != nil && items.kind == jsonArray {
			prefix, rest = items, n.get("additionalItems")
		}
		switch {
		case prefix != nil && prefix.kind == jsonArray:
			for _, e := range prefix.items {
				walk(e, depth+1, true)
			}
			walk(rest, depth+1, true)
		case inTuple:
			walk(items, depth+1, true)
		}
	}
	walk(s, 0, false)
	c.heads[s] = refs
	return refs
}

// headReaches reports whether target names head at its top level, directly
// or through other named types' top levels. It is only asked for a ref from
// head's top level to target, so it is true exactly when both are in the same
// strongly connected component of the top-level reference graph (Tarjan's
// algorithm, linear in the graph, computed once per tool: a hostile schema
// with thousands of mutually referring $defs stays cheap).
func (c *converter) headReaches(target, head *jsonValue, d *document) bool {
	if target == head {
		return true
	}
	if c.scc == nil {
		c.scc = map[*jsonValue]int{}
	}
	for _, n := range []*jsonValue{head, target} {
		if _, done := c.scc[n]; !done {
			c.tarjan(n, d)
		}
	}
	return c.scc[target] == c.scc[head]
}

// tarjan assigns a component id to every node reachable from root.
func (c *converter) tarjan(root *jsonValue, d *document) {
	index := map[*jsonValue]int{}
	low := map[*jsonValue]int{}
	onStack := map[*jsonValue]bool{}
	var stack []*jsonValue
	var visit func(n *jsonValue)
	visit = func(n *jsonValue) {
		index[n] = len(index)
		low[n] = index[n]
		stack = append(stack, n)
		onStack[n] = true
		for _, next := range c.headRefs(n, d) {
			if _, done := c.scc[next]; done {
				continue // finished in an earlier run
			}
			if _, seen := index[next]; !seen {
				visit(next)
				low[n] = min(low[n], low[next])
			} else if onStack[next] {
				low[n] = min(low[n], index[next])
			}
		}
		if low[n] == index[n] {
			id := c.nextSCC
			c.nextSCC++
			for {
				top := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[top] = false
				c.scc[top] = id
				if top == n {
					break
				}
			}
		}
	}
	visit(root)
}

// withDoc puts a one-line doc comment in front of a type that stands inside
// another (a union member, an array element), where no JSDoc block fits.
//
// The result binds like an intersection member, so that an array of it is
// written (/** doc */ T)[] and the comment visibly belongs to the element.
func withDoc(t tsType, d docInfo) tsType {
	prefix := d.inline()
	if prefix == "" {
		return t
	}
	return tsType{text: prefix + paren(t, precPrimary), prec: precIntersection, refs: t.refs, top: t.top, bot: t.bot}
}

func paren(t tsType, need int) string {
	if t.prec >= need {
		return t.text
	}
	return "(" + t.text + ")"
}

// union joins members with |, dropping duplicates and never; unknown absorbs.
func union(members []tsType) tsType {
	if len(members) == 1 {
		return members[0] // keeps a documented unknown's comment
	}
	var out []tsType
	seen := map[string]bool{}
	for _, m := range members {
		if m.top {
			return tUnknown
		}
		if m.bot || seen[m.text] {
			continue
		}
		seen[m.text] = true
		out = append(out, m)
	}
	switch len(out) {
	case 0:
		return tNever
	case 1:
		return out[0]
	}
	var b strings.Builder
	refs := false
	for i, m := range out {
		if i > 0 {
			b.WriteString(" | ")
		}
		b.WriteString(paren(m, precIntersection))
		refs = refs || m.refs
	}
	return tsType{text: b.String(), prec: precUnion, refs: refs}
}

// intersection joins parts with &, dropping unknown; never absorbs.
func intersection(parts []tsType) tsType {
	var out []tsType
	seen := map[string]bool{}
	for _, p := range parts {
		if p.bot {
			return tNever
		}
		if p.top || p.text == "" || seen[p.text] {
			continue
		}
		seen[p.text] = true
		out = append(out, p)
	}
	switch len(out) {
	case 0:
		return tUnknown
	case 1:
		return out[0]
	}
	var b strings.Builder
	refs := false
	for i, p := range out {
		if i > 0 {
			b.WriteString(" & ")
		}
		b.WriteString(paren(p, precIntersection))
		refs = refs || p.refs
	}
	return tsType{text: b.String(), prec: precIntersection, refs: refs}
}

// literal renders a JSON value as a TypeScript literal type.
func literal(v *jsonValue) string {
	switch v.kind {
	case jsonNull:
		return "null"
	case jsonBool:
		return strconv.FormatBool(v.boolean)
	case jsonNumber:
		return v.str
	case jsonString:
		return quoteString(v.str)
	case jsonArray:
		parts := make([]string, len(v.items))
		for i, it := range v.items {
			parts[i] = literal(it)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	default:
		if len(v.members) == 0 {
			return "Record<string, never>"
		}
		parts := make([]string, len(v.members))
		for i, m := range v.members {
			parts[i] = propertyKey(m.key) + ": " + literal(m.value)
		}
		return "{ " + strings.Join(parts, "; ") + " }"
	}
}

// propertyKey writes a property name bare when it is an identifier, quoted otherwise.
func propertyKey(name string) string {
	if isIdentifier(name) {
		return name
	}
	return quoteString(name)
}

func kindName(k jsonKind) string {
	switch k {
	case jsonNull:
		return "null"
	case jsonBool:
		return "a boolean"
	case jsonNumber:
		return "a number"
	case jsonString:
		return "a string"
	case jsonArray:
		return "an array"
	default:
		return "an object"
	}
}
