package avro

import (
	"fmt"
	"sort"
	"strings"

	"sharq/schema/internal/javaorder"
)

// Avro's SchemaCompatibility.SchemaIncompatibilityType, which Confluent's
// messages name.
const (
	nameMismatch           = "NAME_MISMATCH"
	fixedSizeMismatch      = "FIXED_SIZE_MISMATCH"
	missingEnumSymbols     = "MISSING_ENUM_SYMBOLS"
	readerFieldMissingDflt = "READER_FIELD_MISSING_DEFAULT_VALUE"
	typeMismatch           = "TYPE_MISMATCH"
	missingUnionBranch     = "MISSING_UNION_BRANCH"
)

type incompat struct {
	kind     string
	message  string
	location []string // reference tokens from the root, the root's "" first
}

// path is Incompatibility.getLocation(): a JSON pointer without the root.
func (i incompat) path() string {
	var sb strings.Builder
	sb.WriteByte('/')
	for k, tok := range i.location[1:] {
		if k > 0 {
			sb.WriteByte('/')
		}
		tok = strings.ReplaceAll(tok, "~", "~0")
		sb.WriteString(strings.ReplaceAll(tok, "/", "~1"))
	}
	return sb.String()
}

// confluent is Confluent's avro.Difference.toString(): the reader and
// writer roles are left as %s for the registry to fill ("new"/"old").
func (i incompat) confluent() string {
	// A '%' of a name would read as a role to fill.
	p := strings.ReplaceAll(i.path(), "%", "%%")
	msg := strings.ReplaceAll(i.message, "%", "%%")
	var d string
	switch i.kind {
	case fixedSizeMismatch:
		d = "The size of FIXED type field at path '" + p + "' in the %s schema does not match with the %s schema"
	case typeMismatch:
		d = "The type (path '" + p + "') of a field in the %s schema does not match with the %s schema"
	case nameMismatch:
		d = "The name of the schema has changed (path '" + p + "')"
	case missingEnumSymbols:
		d = "The %s schema is missing enum symbols '" + msg + "' at path '" + p + "' in the %s schema"
	case missingUnionBranch:
		d = "The %s schema is missing a type inside a union field at path '" + p + "' in the %s schema"
	case readerFieldMissingDflt:
		d = "The field '" + msg + "' at path '" + p + "' in the %s schema has no default value and is missing in the %s schema"
	}
	return "{errorType:'" + i.kind + "', description:'" + d + "', additionalInfo:'" + msg + "'}"
}

// checker is Avro's ReaderWriterCompatibilityChecker: it memoizes each
// (reader, writer) pair by identity, and a pair met again while being
// checked (a recursive type) counts as compatible. Every incompatibility is
// collected, not only the first.
type checker struct {
	memo map[[2]*node]*memoEntry
	// failure is set when Avro would throw (a reader field whose name and
	// aliases match two writer fields).
	failure string
}

type memoEntry struct {
	inProgress bool
	list       []incompat
}

func checkReaderWriter(reader, writer *node) ([]incompat, string) {
	c := &checker{memo: make(map[[2]*node]*memoEntry)}
	var loc []string
	list := c.compat("", reader, writer, &loc)
	return list, c.failure
}

func (c *checker) compat(token string, r, w *node, loc *[]string) []incompat {
	*loc = append(*loc, token)
	defer func() { *loc = (*loc)[:len(*loc)-1] }()
	k := [2]*node{r, w}
	if e := c.memo[k]; e != nil {
		if e.inProgress {
			return nil
		}
		return e.list
	}
	c.memo[k] = &memoEntry{inProgress: true}
	list := c.calculate(r, w, loc)
	c.memo[k] = &memoEntry{list: list}
	return list
}

// fresh is getCompatibility(reader, writer) without a location: Avro uses
// it to test union branches, keeping only whether they are compatible.
func (c *checker) fresh(r, w *node) []incompat {
	var loc []string
	return c.compat("", r, w, &loc)
}

func at(loc []string) []string { return append([]string(nil), loc...) }

func (c *checker) calculate(r, w *node, loc *[]string) []incompat {
	var out []incompat
	if r.typ == w.typ {
		switch r.typ {
		case Array, Map:
			tok := "items"
			if r.typ == Map {
				tok = "values"
			}
			return c.compat(tok, r.items, w.items, loc)
		case Fixed:
			out = append(out, c.names(r, w, loc)...)
			if r.size != w.size {
				*loc = append(*loc, "size")
				out = append(out, incompat{fixedSizeMismatch, fmt.Sprintf("expected: %d, found: %d", w.size, r.size), at(*loc)})
				*loc = (*loc)[:len(*loc)-1]
			}
			return out
		case Enum:
			out = append(out, c.names(r, w, loc)...)
			return append(out, c.symbols(r, w, loc)...)
		case Record:
			out = append(out, c.names(r, w, loc)...)
			return append(out, c.fields(r, w, loc)...)
		case Union:
			for i, wb := range w.branches {
				*loc = append(*loc, fmt.Sprint(i))
				if len(c.fresh(r, wb)) > 0 {
					out = append(out, incompat{missingUnionBranch, "reader union lacking writer type: " + wb.typ.upper(), at(*loc)})
				}
				*loc = (*loc)[:len(*loc)-1]
			}
			return out
		}
		return nil
	}
	if w.typ == Union {
		for i, wb := range w.branches {
			out = append(out, c.compat(fmt.Sprint(i), r, wb, loc)...)
		}
		return out
	}
	ok := false
	switch r.typ {
	case Long:
		ok = w.typ == Int
	case Float:
		ok = w.typ == Int || w.typ == Long
	case Double:
		ok = w.typ == Int || w.typ == Long || w.typ == Float
	case Bytes:
		ok = w.typ == String
	case String:
		ok = w.typ == Bytes
	case Union:
		for _, rb := range r.branches {
			if len(c.fresh(rb, w)) == 0 {
				return nil
			}
		}
		return []incompat{{missingUnionBranch, "reader union lacking writer type: " + w.typ.upper(), at(*loc)}}
	}
	if ok {
		return nil
	}
	return []incompat{{typeMismatch, fmt.Sprintf("reader type: %s not compatible with writer type: %s", r.typ.upper(), w.typ.upper()), at(*loc)}}
}

// names is checkSchemaNames: the short names match, or the reader has the
// writer's full name as an alias.
func (c *checker) names(r, w *node, loc *[]string) []incompat {
	if r.name == w.name || hasString(r.aliasNames(), w.fullName()) {
		return nil
	}
	*loc = append(*loc, "name")
	defer func() { *loc = (*loc)[:len(*loc)-1] }()
	return []incompat{{nameMismatch, "expected: " + w.fullName(), at(*loc)}}
}

// symbols is checkReaderEnumContainsAllWriterEnumSymbols: the writer's
// symbols the reader lacks, unless the reader has a default symbol.
func (c *checker) symbols(r, w *node, loc *[]string) []incompat {
	var missing []string
	for _, s := range w.symbols {
		if !hasString(r.symbols, s) && !hasString(missing, s) {
			missing = append(missing, s)
		}
	}
	if len(missing) == 0 || r.enumDefault != nil && hasString(r.symbols, *r.enumDefault) {
		return nil
	}
	sort.Slice(missing, func(i, j int) bool { return javaorder.Less(missing[i], missing[j]) })
	*loc = append(*loc, "symbols")
	defer func() { *loc = (*loc)[:len(*loc)-1] }()
	return []incompat{{missingEnumSymbols, "[" + strings.Join(missing, ", ") + "]", at(*loc)}}
}

// fields is checkReaderWriterRecordFields: every reader field is read from
// the writer's field of the same name (or an alias), or has a default. A
// new enum field without a field default but with an enum default is
// checked against the writer record itself, as Avro does.
func (c *checker) fields(r, w *node, loc *[]string) []incompat {
	var out []incompat
	*loc = append(*loc, "fields")
	defer func() { *loc = (*loc)[:len(*loc)-1] }()
	for _, rf := range r.fields {
		*loc = append(*loc, fmt.Sprint(rf.pos))
		wf := c.writerField(w, rf)
		switch {
		case wf != nil:
			out = append(out, c.compat("type", rf.typ, wf.typ, loc)...)
		case rf.def != nil:
		case rf.typ.typ == Enum && rf.typ.enumDefault != nil:
			out = append(out, c.compat("type", rf.typ, w, loc)...)
		default:
			out = append(out, incompat{readerFieldMissingDflt, rf.name, at(*loc)})
		}
		*loc = (*loc)[:len(*loc)-1]
	}
	return out
}

// writerField is lookupWriterField.
func (c *checker) writerField(w *node, rf *field) *field {
	var found []*field
	if f := w.field(rf.name); f != nil {
		found = append(found, f)
	}
	for _, a := range rf.aliases {
		if f := w.field(a); f != nil {
			found = append(found, f)
		}
	}
	switch len(found) {
	case 0:
		return nil
	case 1:
		return found[0]
	}
	if c.failure == "" {
		c.failure = fmt.Sprintf("Reader record field %s type:%s pos:%d matches multiple fields in writer record schema %s",
			rf.name, rf.typ.typ.upper(), rf.pos, toJSON(w, nil, false))
	}
	return found[0]
}
