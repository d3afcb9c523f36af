package schema

import (
	"fmt"
	"strings"
)

// maxReferenceDepth bounds how deep references may nest; cycles end
// earlier (a name is resolved once).
const maxReferenceDepth = 64

// candidate is a schema being registered, looked up or checked: what the
// client sent, then its canonical form once parsed.
type candidate struct {
	subject  string
	typ      string
	text     string
	refs     []Reference
	metadata *Metadata
	ruleSet  *RuleSet
	version  int32 // requested version: 0 next, -1 latest
	id       int32 // requested id: -1 none (IMPORT mode gives one)
	parsed   Parsed
	// normalized is parsed's normalized canonical text, once canLookup
	// needed it.
	normalized string
}

func (c *candidate) sum() [16]byte { return schemaHash(c.text, c.refs, c.metadata, c.ruleSet) }

func (c *candidate) clone() *candidate {
	d := *c
	d.normalized = ""
	d.refs = append([]Reference(nil), c.refs...)
	d.metadata = c.metadata.clone()
	return &d
}

// format returns the Format of a schema type, or Confluent's 42201.
func (r *Registry) format(typ string) (Format, *Error) {
	f := r.formats[typ]
	if f == nil {
		return nil, errInvalidSchema("Invalid schema type " + typ)
	}
	return f, nil
}

// canonicalize parses c (AbstractSchemaRegistry.canonicalizeSchema):
// references resolved (a version of -1 becomes the latest), normalised when
// asked, and c's text replaced by the canonical form the registry stores
// and compares. isNew is Confluent's: a new registration is checked
// strictly (Format.Parse) and its references must not be deleted; lookups,
// compatibility checks and imports parse as stored schemas are
// (ParseStored). The caller holds r.mu.
func (r *Registry) canonicalize(c *candidate, normalize, isNew bool) *Error {
	if strings.TrimSpace(c.text) == "" {
		return errInvalidSchema("Empty schema")
	}
	f, e := r.format(c.typ)
	if e != nil {
		return e
	}
	resolved, refs, err := r.resolve(c.subject, c.refs, !isNew, map[string]bool{}, 0)
	if err != nil {
		return errInvalidSchema(fmt.Sprintf("Invalid schema of type %s, details: %v", c.typ, err))
	}
	parse := f.Parse
	if !isNew {
		parse = func(text string, refs []ResolvedReference) (Parsed, error) { return ParseStored(f, text, refs) }
	}
	p, err := parse(c.text, resolved)
	if err != nil {
		return errInvalidSchema(fmt.Sprintf("Invalid schema of type %s, details: %v", c.typ, err))
	}
	if normalize {
		p = p.Normalized()
	}
	c.parsed, c.text, c.refs = p, p.Canonical(), refs
	return nil
}

// resolve looks up references (AbstractSchemaProvider.resolveReferences):
// each relative to the referring subject's context, a name resolved once.
func (r *Registry) resolve(parent string, refs []Reference, lookupDeleted bool, seen map[string]bool, depth int) ([]ResolvedReference, []Reference, error) {
	if len(refs) == 0 {
		return nil, refs, nil
	}
	if depth > maxReferenceDepth {
		return nil, nil, fmt.Errorf("references nest deeper than %d", maxReferenceDepth)
	}
	var out []ResolvedReference
	fixed := make([]Reference, len(refs))
	for i, ref := range refs {
		if ref.Name == "" || ref.Subject == "" {
			return nil, nil, fmt.Errorf("Invalid reference: {name='%s', subject='%s', version=%d}", ref.Name, ref.Subject, ref.Version)
		}
		q := qualifyWithParent(parent, ref.Subject).String()
		var v *version
		if ref.Version == -1 {
			if e := r.st.subjects[q]; e != nil {
				v = e.latest()
			}
		} else if v = r.st.get(q, int32(ref.Version)); v != nil && v.Deleted && !lookupDeleted {
			v = nil
		}
		if v == nil {
			return nil, nil, fmt.Errorf("No schema reference found for subject \"%s\" and version %d", q, ref.Version)
		}
		fixed[i] = ref
		fixed[i].Version = int(v.Version)
		if seen[ref.Name] {
			continue
		}
		seen[ref.Name] = true
		children, _, err := r.resolve(v.Subject, v.References, lookupDeleted, seen, depth+1)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, ResolvedReference{Name: ref.Name, Type: v.SchemaType, Schema: v.Schema, References: children})
	}
	return out, fixed, nil
}

// parseStored parses a stored version (its text is already canonical);
// the caller holds r.mu.
func (r *Registry) parseStored(v *version) (Parsed, *Error) {
	key := parseKey{sum: v.sum, typ: v.SchemaType}
	if p, ok := r.parsed.get(key); ok {
		return p, nil
	}
	f, e := r.format(v.SchemaType)
	if e != nil {
		return nil, e
	}
	resolved, _, err := r.resolve(v.Subject, v.References, true, map[string]bool{}, 0)
	if err != nil {
		return nil, errInvalidSchema(fmt.Sprintf("Invalid schema of type %s, details: %v", v.SchemaType, err))
	}
	p, err := ParseStored(f, v.Schema, resolved)
	if err != nil {
		return nil, errInvalidSchema(fmt.Sprintf("Invalid schema of type %s, details: %v", v.SchemaType, err))
	}
	r.parsed.put(key, p)
	return p, nil
}

// canLookup is ParsedSchema.canLookup: c names the stored version v
// although their hashes differ. That is so when their normalised forms
// are equal with the same references, rule set and metadata, a
// confluent:version property aside when only one of them has it (the
// incoming one must then name v's version).
func (r *Registry) canLookup(c *candidate, v *version) bool {
	if c.typ != v.SchemaType || !sameRefs(c.refs, v.References) || !sameRuleSet(c.ruleSet, v.RuleSet) {
		return false
	}
	cv, cok := c.metadata.property(confluentVersion)
	pv, pok := v.Metadata.property(confluentVersion)
	cm, pm := c.metadata, v.Metadata
	switch {
	case !cok && pok:
		pm = withoutProperty(pm, confluentVersion)
	case cok && !pok:
		if cv != itoa(v.Version) {
			return false
		}
		cm = withoutProperty(cm, confluentVersion)
	case cok && pok && cv != pv:
		return false
	}
	if !sameMetadata(cm, pm) {
		return false
	}
	if c.text == v.Schema {
		return true
	}
	if c.parsed == nil {
		return false
	}
	if c.normalized == "" {
		c.normalized = c.parsed.Normalized().Canonical()
	}
	key := parseKey{sum: v.sum, typ: v.SchemaType, normalize: true}
	prev, ok := r.parsed.normalized(key)
	if !ok {
		p, e := r.parseStored(v)
		if e != nil {
			return false
		}
		prev = p.Normalized().Canonical()
		r.parsed.putNormalized(key, prev)
	}
	return c.normalized == prev
}

func withoutProperty(m *Metadata, k string) *Metadata {
	if _, ok := m.property(k); !ok {
		return m
	}
	c := m.clone()
	delete(c.Properties, k)
	return c
}

func sameRefs(a, b []Reference) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// sameMetadata compares normalised metadata; nil and empty are the same
// (Confluent's copy with empty metadata).
func sameMetadata(a, b *Metadata) bool {
	if a == nil {
		a = &Metadata{}
	}
	if b == nil {
		b = &Metadata{}
	}
	return string(marshal(a)) == string(marshal(b))
}

func sameRuleSet(a, b *RuleSet) bool {
	if a == nil || b == nil {
		return a == b
	}
	return string(marshal(a)) == string(marshal(b))
}
