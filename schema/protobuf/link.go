package protobuf

import (
	"fmt"
	"sort"
	"strings"
)

// The linker: a file with its imports (references by import path, the
// well-known files built in) resolved into descriptors, with the checks
// protoc's DescriptorBuilder makes: names unique, types resolved with
// protobuf's scoping and only through imported files, field numbers and
// ranges, proto3's rules, enums, maps, extensions, options interpreted
// against descriptor.proto (custom ones through their extensions).

type symKind uint8

const (
	symPackage symKind = iota + 1
	symMessage
	symEnum
	symEnumValue
	symField
	symOneof
	symExtension
	symService
	symMethod
)

var symKindNames = map[symKind]string{symPackage: "package", symMessage: "message", symEnum: "enum", symEnumValue: "enum value",
	symField: "field", symOneof: "oneof", symExtension: "extension", symService: "service", symMethod: "method"}

type symbol struct {
	kind  symKind
	file  *lfile
	msg   *lmessage
	enum  *lenum
	field *lfield
}

func (s *symbol) isType() bool { return s.kind == symMessage || s.kind == symEnum }

type lfile struct {
	path     string
	f        *protoFile
	syntax   string // proto2, proto3, editions
	imports  []*lfile
	public   map[*lfile]bool
	weak     map[*lfile]bool
	deps     []string // dependency paths in order: imports then public ones, as written
	msgs     []*lmessage
	enums    []*lenum
	exts     []*lfield
	services []*lservice
	optsVal  *msgValue
	visible  map[*lfile]bool
}

type lmessage struct {
	full      string
	name      string
	file      *lfile
	src       *message
	fields    []*lfield
	nested    []*lmessage
	enums     []*lenum
	exts      []*lfield
	oneofs    []*loneof
	extRanges []lrange
	resRanges []lrange
	resNames  []string
	opts      []*option
	mapEntry  bool
	optsVal   *msgValue
	pos       pos
}

type lrange struct {
	start, end int64 // inclusive end
	opts       []*option
	optsVal    *msgValue
	pos        pos
}

type loneof struct {
	name      string
	opts      []*option
	optsVal   *msgValue
	synthetic bool
}

type lfield struct {
	name       string
	full       string
	num        int64
	label      int
	typ        int
	rawType    string // as written
	typeName   string // resolved, with a leading dot
	msgType    *lmessage
	enumType   *lenum
	extendee   string // as written
	extendeeT  *lmessage
	def        *string
	defLit     optionKind
	defOut     *string // the default as the descriptor holds it
	jsonName   *string
	oneof      int // index into the message's oneofs, -1
	proto3Opt  bool
	opts       []*option
	optsVal    *msgValue
	scope      string // the scope names in it resolve from
	owner      *lmessage
	file       *lfile
	pos        pos
	seq        int
	isMap      bool
	isGroup    bool
	hasLabel   bool
	isExt      bool
	groupBody  *lmessage
	explicitPr bool // editions: field_presence, resolved later
}

type lenum struct {
	full      string
	name      string
	file      *lfile
	scope     string // the scope its values are in
	values    []*lvalue
	resRanges []lrange
	resNames  []string
	opts      []*option
	optsVal   *msgValue
	pos       pos
}

type lvalue struct {
	name    string
	num     int64
	opts    []*option
	optsVal *msgValue
	pos     pos
}

type lservice struct {
	full    string
	name    string
	file    *lfile
	methods []*lmethod
	opts    []*option
	optsVal *msgValue
	pos     pos
}

type lmethod struct {
	name                    string
	in, out                 string
	inT, outT               string
	clientStream, srvStream bool
	opts                    []*option
	optsVal                 *msgValue
	pos                     pos
}

// source gives the text (or descriptor bytes as base64) of an import.
type source func(path string) (*protoFile, error)

type linker struct {
	files   map[string]*lfile
	loading map[string]bool
	syms    map[string]*symbol
	src     source
	cur     *lfile
}

func (l *linker) errorf(file *lfile, at pos, format string, args ...any) error {
	name := mainName
	if file != nil {
		name = file.path
	}
	if at.line == 0 {
		return fmt.Errorf("%s: %s", name, fmt.Sprintf(format, args...))
	}
	return &posError{name, at, fmt.Sprintf(format, args...)}
}

// link links the file at path (already parsed as f) with what src gives
// for its imports.
func link(path string, f *protoFile, src source) (*lfile, *linker, error) {
	l := &linker{files: map[string]*lfile{}, loading: map[string]bool{}, syms: map[string]*symbol{}, src: src}
	lf, err := l.load(path, f, nil)
	if err != nil {
		return nil, nil, err
	}
	return lf, l, nil
}

func (l *linker) load(path string, f *protoFile, from *lfile) (*lfile, error) {
	if lf := l.files[path]; lf != nil {
		return lf, nil
	}
	if l.loading[path] {
		return nil, l.errorf(from, pos{}, "File recursively imports itself: %s", path)
	}
	l.loading[path] = true
	defer delete(l.loading, path)
	if f == nil {
		var err error
		if f, err = l.src(path); err != nil {
			return nil, err
		}
	}
	lf := &lfile{path: path, f: f, public: map[*lfile]bool{}, weak: map[*lfile]bool{}}
	switch {
	case f.edition != "":
		lf.syntax = "editions"
	case f.syntax == "proto3":
		lf.syntax = "proto3"
	default:
		lf.syntax = "proto2"
	}
	seen := map[string]bool{}
	add := func(p string, public bool) error {
		if seen[p] {
			return l.errorf(lf, pos{}, "Import \"%s\" was listed twice.", p)
		}
		seen[p] = true
		dep, err := l.load(p, nil, lf)
		if err != nil {
			return err
		}
		lf.imports = append(lf.imports, dep)
		lf.deps = append(lf.deps, p)
		if public {
			lf.public[dep] = true
		}
		if f.weak[p] {
			lf.weak[dep] = true
		}
		return nil
	}
	order := f.importOrder
	if order == nil {
		order = append(append([]string(nil), f.imports...), f.publicImports...)
	}
	isPublic := map[string]bool{}
	for _, p := range f.publicImports {
		isPublic[p] = true
	}
	for _, p := range order {
		if err := add(p, isPublic[p]); err != nil {
			return nil, err
		}
	}
	l.files[path] = lf
	prev := l.cur
	l.cur = lf
	defer func() { l.cur = prev }()
	if err := l.build(lf); err != nil {
		return nil, err
	}
	if err := l.resolveFile(lf); err != nil {
		return nil, err
	}
	if err := l.check(lf); err != nil {
		return nil, err
	}
	if err := l.interpretOptions(lf); err != nil {
		return nil, err
	}
	return lf, nil
}

// visibleFiles are the file itself, its imports and, transitively, their
// public imports.
func (lf *lfile) visibleFiles() map[*lfile]bool {
	if lf.visible != nil {
		return lf.visible
	}
	v := map[*lfile]bool{lf: true}
	var addPublic func(f *lfile)
	addPublic = func(f *lfile) {
		for dep := range f.public {
			if !v[dep] {
				v[dep] = true
				addPublic(dep)
			}
		}
	}
	for _, dep := range lf.imports {
		v[dep] = true
		addPublic(dep)
	}
	lf.visible = v
	return v
}

func (l *linker) define(lf *lfile, name string, s *symbol, at pos) error {
	if old := l.syms[name]; old != nil {
		if old.kind == symPackage && s.kind == symPackage {
			return nil
		}
		scope, short := "", name
		if i := strings.LastIndexByte(name, '.'); i >= 0 {
			scope, short = name[:i], name[i+1:]
		}
		if old.file != lf && old.kind != symPackage {
			return l.errorf(lf, at, "\"%s\" is already defined in file \"%s\".", name, old.file.path)
		}
		if scope == "" {
			return l.errorf(lf, at, "\"%s\" is already defined.", short)
		}
		return l.errorf(lf, at, "\"%s\" is already defined in \"%s\".", short, scope)
	}
	l.syms[name] = s
	return nil
}

func join(scope, name string) string {
	if scope == "" {
		return name
	}
	return scope + "." + name
}

// build creates the file's descriptors and defines their names.
func (l *linker) build(lf *lfile) error {
	f := lf.f
	if f.pkg != "" {
		parts := strings.Split(f.pkg, ".")
		for i := range parts {
			name := strings.Join(parts[:i+1], ".")
			if old := l.syms[name]; old != nil && old.kind != symPackage {
				return l.errorf(lf, pos{}, "\"%s\" is already defined (as something other than a package) in file \"%s\".", name, old.file.path)
			}
			l.syms[name] = &symbol{kind: symPackage, file: lf}
		}
	}
	for _, t := range f.types {
		switch t := t.(type) {
		case *message:
			m, err := l.buildMessage(lf, f.pkg, t)
			if err != nil {
				return err
			}
			lf.msgs = append(lf.msgs, m)
		case *enum:
			e, err := l.buildEnum(lf, f.pkg, t)
			if err != nil {
				return err
			}
			lf.enums = append(lf.enums, e)
		}
	}
	exts, err := l.buildExtends(lf, f.pkg, nil, f.extends)
	if err != nil {
		return err
	}
	lf.exts = exts
	for _, s := range f.services {
		ls := &lservice{full: join(f.pkg, s.name), name: s.name, file: lf, opts: s.options, pos: s.pos}
		if err := l.define(lf, ls.full, &symbol{kind: symService, file: lf}, s.pos); err != nil {
			return err
		}
		for _, r := range s.rpcs {
			m := &lmethod{name: r.name, in: r.requestType, out: r.responseType, clientStream: r.requestStream, srvStream: r.responseStream, opts: r.options, pos: r.pos}
			if err := l.define(lf, join(ls.full, r.name), &symbol{kind: symMethod, file: lf}, r.pos); err != nil {
				return err
			}
			ls.methods = append(ls.methods, m)
		}
		lf.services = append(lf.services, ls)
	}
	return nil
}

func (l *linker) buildEnum(lf *lfile, scope string, e *enum) (*lenum, error) {
	le := &lenum{full: join(scope, e.name), name: e.name, file: lf, scope: scope, opts: e.options, pos: e.pos}
	if err := l.define(lf, le.full, &symbol{kind: symEnum, file: lf, enum: le}, e.pos); err != nil {
		return nil, err
	}
	if len(e.constants) == 0 {
		return nil, l.errorf(lf, e.pos, "Enums must contain at least one value.")
	}
	for _, c := range e.constants {
		v := &lvalue{name: c.name, num: c.tag, opts: c.options, pos: c.pos}
		// Enum values are siblings of their enum, as in C++.
		if old := l.syms[join(scope, c.name)]; old != nil && old.kind == symEnumValue && old.file == lf {
			return nil, l.errorf(lf, c.pos, "\"%s\" is already defined in \"%s\". Note that enum values use C++ scoping rules, meaning that enum values are siblings of their type, not children of it.  Therefore, \"%s\" must be unique within %s, not just within \"%s\".",
				c.name, scopeName(scope), c.name, scopeName2(scope), e.name)
		}
		if err := l.define(lf, join(scope, c.name), &symbol{kind: symEnumValue, file: lf, enum: le}, c.pos); err != nil {
			return nil, err
		}
		le.values = append(le.values, v)
	}
	for _, r := range e.reserveds {
		for _, v := range r.values {
			if v.isName {
				le.resNames = append(le.resNames, v.name)
			} else {
				le.resRanges = append(le.resRanges, lrange{start: v.start, end: v.end, pos: r.pos})
			}
		}
	}
	return le, nil
}

func scopeName(scope string) string {
	if scope == "" {
		return ""
	}
	return scope
}

func scopeName2(scope string) string {
	if scope == "" {
		return "the global scope"
	}
	return "\"" + scope + "\""
}

func (l *linker) buildMessage(lf *lfile, scope string, m *message) (*lmessage, error) {
	lm := &lmessage{full: join(scope, m.name), name: m.name, file: lf, src: m, opts: m.options, pos: m.pos}
	if err := l.define(lf, lm.full, &symbol{kind: symMessage, file: lf, msg: lm}, m.pos); err != nil {
		return nil, err
	}
	for _, o := range m.options {
		if o.name == "map_entry" && !o.parenthesized {
			return nil, l.errorf(lf, o.pos, "map_entry should not be set explicitly. Use map<KeyType, ValueType> instead.")
		}
	}
	// Fields in declaration order, with oneofs', groups' and map fields'
	// nested types where they were declared.
	type item struct {
		seq   int
		field *lfield
		msg   *lmessage
	}
	var items []item
	var nestedMsgs []item
	addField := func(f *field, oneofIdx int) error {
		lfld := &lfield{name: f.name, full: join(lm.full, f.name), num: f.tag, rawType: f.typ, def: f.defaultValue, defLit: f.defaultLit,
			jsonName: f.jsonName, oneof: oneofIdx, opts: f.options, scope: lm.full, owner: lm, file: lf, pos: f.pos, seq: f.seq,
			hasLabel: f.label != ""}
		lfld.label = labelFor(f.label, lf)
		if f.label == "optional" && lf.syntax == "proto3" && oneofIdx < 0 {
			lfld.proto3Opt = true
		}
		if f.mapKey != "" {
			lfld.isMap = true
			entryName := mapEntryName(f.name)
			entry := &lmessage{full: join(lm.full, entryName), name: entryName, file: lf, mapEntry: true, pos: f.pos,
				src: &message{name: entryName}}
			key := &lfield{name: "key", full: join(entry.full, "key"), num: 1, label: labelOptional, rawType: f.mapKey, oneof: -1, scope: lm.full, owner: entry, file: lf, pos: f.pos}
			val := &lfield{name: "value", full: join(entry.full, "value"), num: 2, label: labelOptional, rawType: f.mapValue, oneof: -1, scope: lm.full, owner: entry, file: lf, pos: f.pos}
			entry.fields = []*lfield{key, val}
			if err := l.define(lf, entry.full, &symbol{kind: symMessage, file: lf, msg: entry}, f.pos); err != nil {
				return err
			}
			for _, x := range entry.fields {
				if err := l.define(lf, x.full, &symbol{kind: symField, file: lf, field: x}, f.pos); err != nil {
					return err
				}
			}
			lfld.label = labelRepeated
			lfld.rawType = "." + entry.full
			lfld.msgType = entry
			nestedMsgs = append(nestedMsgs, item{seq: f.seq, msg: entry})
		}
		if err := l.define(lf, lfld.full, &symbol{kind: symField, file: lf, field: lfld}, f.pos); err != nil {
			return err
		}
		items = append(items, item{seq: f.seq, field: lfld})
		return nil
	}
	addGroup := func(g *group, oneofIdx int) error {
		if lf.syntax == "proto3" {
			return l.errorf(lf, g.pos, "Groups are not supported in proto3 syntax.")
		}
		if lf.syntax == "editions" {
			return l.errorf(lf, g.pos, "Group syntax is no longer supported in editions. By default, all messages are length-prefixed.")
		}
		body, err := l.buildMessage(lf, lm.full, g.body)
		if err != nil {
			return err
		}
		lfld := &lfield{name: strings.ToLower(g.name), num: g.tag, label: labelFor(g.label, lf), typ: typeGroup, rawType: "." + body.full,
			msgType: body, oneof: oneofIdx, opts: g.options, scope: lm.full, owner: lm, file: lf, pos: g.pos, seq: g.seq, isGroup: true, hasLabel: g.label != "", groupBody: body}
		lfld.full = join(lm.full, lfld.name)
		if err := l.define(lf, lfld.full, &symbol{kind: symField, file: lf, field: lfld}, g.pos); err != nil {
			return err
		}
		items = append(items, item{seq: g.seq, field: lfld})
		nestedMsgs = append(nestedMsgs, item{seq: g.seq, msg: body})
		return nil
	}
	for _, f := range m.fields {
		if err := addField(f, -1); err != nil {
			return nil, err
		}
	}
	for _, g := range m.groups {
		if err := addGroup(g, -1); err != nil {
			return nil, err
		}
	}
	for i, o := range m.oneofs {
		lm.oneofs = append(lm.oneofs, &loneof{name: o.name, opts: o.options})
		if err := l.define(lf, join(lm.full, o.name), &symbol{kind: symOneof, file: lf}, o.pos); err != nil {
			return nil, err
		}
		for _, f := range o.fields {
			if err := addField(f, i); err != nil {
				return nil, err
			}
		}
		for _, g := range o.groups {
			if err := addGroup(g, i); err != nil {
				return nil, err
			}
		}
	}
	for _, n := range m.nested {
		switch n := n.(type) {
		case *message:
			nm, err := l.buildMessage(lf, lm.full, n)
			if err != nil {
				return nil, err
			}
			nestedMsgs = append(nestedMsgs, item{seq: n.seq, msg: nm})
		case *enum:
			ne, err := l.buildEnum(lf, lm.full, n)
			if err != nil {
				return nil, err
			}
			lm.enums = append(lm.enums, ne)
		}
	}
	sort.SliceStable(items, func(i, j int) bool { return items[i].seq < items[j].seq })
	sort.SliceStable(nestedMsgs, func(i, j int) bool { return nestedMsgs[i].seq < nestedMsgs[j].seq })
	for _, it := range items {
		lm.fields = append(lm.fields, it.field)
	}
	for _, it := range nestedMsgs {
		lm.nested = append(lm.nested, it.msg)
	}
	// proto3 optional fields get a synthetic oneof each, after the real
	// ones, named _name (with X prepended until it is unique).
	for _, f := range lm.fields {
		if !f.proto3Opt {
			continue
		}
		name := "_" + f.name
		for l.nameTaken(lm, name) {
			name = "X" + name
		}
		f.oneof = len(lm.oneofs)
		lm.oneofs = append(lm.oneofs, &loneof{name: name, synthetic: true})
	}
	for _, r := range m.reserveds {
		for _, v := range r.values {
			if v.isName {
				lm.resNames = append(lm.resNames, v.name)
			} else {
				lm.resRanges = append(lm.resRanges, lrange{start: v.start, end: v.end, pos: r.pos})
			}
		}
	}
	for _, e := range m.extensions {
		if lf.syntax == "proto3" {
			return nil, l.errorf(lf, e.pos, "Extension ranges are not allowed in proto3.")
		}
		for _, v := range e.values {
			lm.extRanges = append(lm.extRanges, lrange{start: v.start, end: v.end, opts: e.options, pos: e.pos})
		}
	}
	exts, err := l.buildExtends(lf, lm.full, lm, m.extends)
	if err != nil {
		return nil, err
	}
	lm.exts = exts
	return lm, nil
}

func (l *linker) nameTaken(lm *lmessage, name string) bool {
	if l.syms[join(lm.full, name)] != nil {
		return true
	}
	for _, o := range lm.oneofs {
		if o.name == name {
			return true
		}
	}
	return false
}

func labelFor(label string, lf *lfile) int {
	switch label {
	case "repeated":
		return labelRepeated
	case "required":
		return labelRequired
	}
	return labelOptional
}

// mapEntryName is protoc's: the field name in CamelCase with "Entry".
func mapEntryName(name string) string {
	var sb strings.Builder
	upper := true
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c == '_' {
			upper = true
			continue
		}
		if upper && c >= 'a' && c <= 'z' {
			c -= 'a' - 'A'
		}
		upper = false
		sb.WriteByte(c)
	}
	return sb.String() + "Entry"
}

func (l *linker) buildExtends(lf *lfile, scope string, owner *lmessage, es []*extendElem) ([]*lfield, error) {
	var out []*lfield
	type item struct {
		seq int
		f   *lfield
	}
	for _, e := range es {
		var items []item
		for _, f := range e.fields {
			if f.jsonName != nil {
				return nil, l.errorf(lf, f.pos, "option json_name is not allowed on extension fields.")
			}
			x := &lfield{name: f.name, full: join(scope, f.name), num: f.tag, label: labelFor(f.label, lf), rawType: f.typ, def: f.defaultValue,
				defLit: f.defaultLit, oneof: -1, opts: f.options, scope: scope, owner: owner, file: lf, pos: f.pos, seq: f.seq, extendee: e.name,
				isExt: true, hasLabel: f.label != ""}
			if err := l.define(lf, x.full, &symbol{kind: symExtension, file: lf, field: x}, f.pos); err != nil {
				return nil, err
			}
			items = append(items, item{f.seq, x})
		}
		for _, g := range e.groups {
			if lf.syntax != "proto2" {
				return nil, l.errorf(lf, g.pos, "Groups are not supported in %s syntax.", lf.syntax)
			}
			var body *lmessage
			var err error
			if owner != nil {
				body, err = l.buildMessage(lf, owner.full, g.body)
				owner.nested = append(owner.nested, body)
			} else {
				body, err = l.buildMessage(lf, scope, g.body)
				lf.msgs = append(lf.msgs, body)
			}
			if err != nil {
				return nil, err
			}
			x := &lfield{name: strings.ToLower(g.name), num: g.tag, label: labelFor(g.label, lf), typ: typeGroup, rawType: "." + body.full,
				msgType: body, oneof: -1, opts: g.options, scope: scope, owner: owner, file: lf, pos: g.pos, seq: g.seq, extendee: e.name,
				isExt: true, isGroup: true, hasLabel: g.label != "", groupBody: body}
			x.full = join(scope, x.name)
			if err := l.define(lf, x.full, &symbol{kind: symExtension, file: lf, field: x}, g.pos); err != nil {
				return nil, err
			}
			items = append(items, item{g.seq, x})
		}
		sort.SliceStable(items, func(i, j int) bool { return items[i].seq < items[j].seq })
		for _, it := range items {
			out = append(out, it.f)
		}
	}
	return out, nil
}

// lookup is protoc's LookupSymbol: a leading dot names a symbol fully;
// otherwise the first component is looked for from the innermost scope
// outwards and the rest within what it finds. typesOnly skips symbols
// that are not types for a single-component name (a field does not hide
// a type of the same name). The symbol must be in a file lf sees.
func (l *linker) lookup(lf *lfile, scope, name string, typesOnly bool) (*symbol, string, error) {
	if strings.HasPrefix(name, ".") {
		s := l.syms[name[1:]]
		if s == nil {
			return nil, "", nil
		}
		return s, name[1:], l.visible(lf, s, name[1:])
	}
	first, rest, dotted := strings.Cut(name, ".")
	for sc := scope; ; {
		cand := join(sc, first)
		if s := l.syms[cand]; s != nil {
			if dotted {
				if s.kind == symPackage || s.kind == symMessage || s.kind == symEnum || s.kind == symService {
					full := cand + "." + rest
					if t := l.syms[full]; t != nil {
						return t, full, l.visible(lf, t, full)
					}
					return nil, "", fmt.Errorf("\"%s\" is resolved to \"%s\", which is not defined. The innermost scope is searched first in name resolution. Consider using a leading '.'(i.e., \".%s\") to start from the outermost scope.", name, full, name)
				}
			} else if !typesOnly || s.isType() {
				return s, cand, l.visible(lf, s, cand)
			}
		}
		if sc == "" {
			return nil, "", nil
		}
		if i := strings.LastIndexByte(sc, '.'); i >= 0 {
			sc = sc[:i]
		} else {
			sc = ""
		}
	}
}

func (l *linker) visible(lf *lfile, s *symbol, full string) error {
	if s.kind == symPackage || lf.visibleFiles()[s.file] {
		return nil
	}
	return fmt.Errorf("\"%s\" seems to be defined in \"%s\", which is not imported by \"%s\".  To use it here, please add the necessary import.", full, s.file.path, lf.path)
}

// resolveType resolves a field's (or method's) type name.
func (l *linker) resolveType(lf *lfile, scope, name string, at pos) (*symbol, string, error) {
	s, full, err := l.lookup(lf, scope, name, true)
	if err != nil {
		return nil, "", l.errorf(lf, at, "%s", err.Error())
	}
	if s == nil {
		return nil, "", l.errorf(lf, at, "\"%s\" is not defined.", name)
	}
	if !s.isType() {
		return nil, "", l.errorf(lf, at, "\"%s\" is not a type.", name)
	}
	return s, full, nil
}

func (l *linker) resolveFile(lf *lfile) error {
	var walk func(m *lmessage) error
	resolveField := func(f *lfield) error {
		if f.isGroup {
			f.typeName = f.rawType
		} else if t := scalarType(f.rawType); t != 0 {
			f.typ = t
		} else {
			s, full, err := l.resolveType(lf, f.scope, f.rawType, f.pos)
			if err != nil {
				return err
			}
			f.typeName = "." + full
			if s.kind == symMessage {
				f.typ, f.msgType = typeMessage, s.msg
			} else {
				f.typ, f.enumType = typeEnum, s.enum
			}
		}
		if f.isExt {
			s, full, err := l.lookup(lf, f.scope, f.extendee, true)
			if err != nil {
				return l.errorf(lf, f.pos, "%s", err.Error())
			}
			if s == nil {
				return l.errorf(lf, f.pos, "\"%s\" is not defined.", f.extendee)
			}
			if s.kind != symMessage {
				return l.errorf(lf, f.pos, "\"%s\" is not a message type.", f.extendee)
			}
			f.extendeeT = s.msg
			f.extendee = "." + full
		}
		return nil
	}
	walk = func(m *lmessage) error {
		for _, f := range m.fields {
			if err := resolveField(f); err != nil {
				return err
			}
		}
		for _, f := range m.exts {
			if err := resolveField(f); err != nil {
				return err
			}
		}
		for _, n := range m.nested {
			if err := walk(n); err != nil {
				return err
			}
		}
		return nil
	}
	for _, m := range lf.msgs {
		if err := walk(m); err != nil {
			return err
		}
	}
	for _, f := range lf.exts {
		if err := resolveField(f); err != nil {
			return err
		}
	}
	for _, s := range lf.services {
		for _, m := range s.methods {
			for _, side := range []struct {
				name string
				out  *string
			}{{m.in, &m.inT}, {m.out, &m.outT}} {
				sym, full, err := l.lookup(lf, s.full, side.name, true)
				if err != nil {
					return l.errorf(lf, m.pos, "%s", err.Error())
				}
				if sym == nil {
					return l.errorf(lf, m.pos, "\"%s\" is not defined.", side.name)
				}
				if sym.kind != symMessage {
					return l.errorf(lf, m.pos, "\"%s\" is not a message type.", side.name)
				}
				*side.out = "." + full
			}
		}
	}
	return nil
}
