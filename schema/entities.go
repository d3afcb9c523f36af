package schema

// Metadata and rule sets (Confluent's data contracts). The registry keeps
// them as Confluent's entities do, normalised (tags, sensitive names and
// rule tags as sorted sets, properties and params as sorted maps), merges
// a config's default and override values into a registration, and carries
// them over from the previous version, as Confluent does. Rules are stored
// and returned, never executed: serializers run them, and Confluent's
// server-side rule execution is not part of its community registry either.

import (
	"crypto/md5"
	"encoding/binary"
	"fmt"
	"hash"
	"slices"
	"sort"
	"strconv"
	"unicode"
)

// Metadata is a schema's user metadata.
type Metadata struct {
	Tags       map[string][]string `json:"tags,omitempty"`
	Properties map[string]string   `json:"properties,omitempty"`
	Sensitive  []string            `json:"sensitive,omitempty"`
}

// confluentVersion is the metadata property Confluent sets to the version
// a schema was registered as when asked to (confluent:version).
const confluentVersion = "confluent:version"

// normalize sorts and deduplicates, as Metadata's constructor does.
func (m *Metadata) normalize() {
	if m == nil {
		return
	}
	for k, v := range m.Tags {
		m.Tags[k] = sortedSet(v)
	}
	m.Sensitive = sortedSet(m.Sensitive)
}

func (m *Metadata) clone() *Metadata {
	if m == nil {
		return nil
	}
	c := &Metadata{Sensitive: slices.Clone(m.Sensitive)}
	if m.Tags != nil {
		c.Tags = make(map[string][]string, len(m.Tags))
		for k, v := range m.Tags {
			c.Tags[k] = slices.Clone(v)
		}
	}
	if m.Properties != nil {
		c.Properties = make(map[string]string, len(m.Properties))
		for k, v := range m.Properties {
			c.Properties[k] = v
		}
	}
	return c
}

func (m *Metadata) property(k string) (string, bool) {
	if m == nil {
		return "", false
	}
	v, ok := m.Properties[k]
	return v, ok
}

// withProperty returns a copy with one property set.
func (m *Metadata) withProperty(k, v string) *Metadata {
	c := m.clone()
	if c == nil {
		c = &Metadata{}
	}
	if c.Properties == nil {
		c.Properties = map[string]string{}
	}
	c.Properties[k] = v
	return c
}

// mergeMetadata is Metadata.mergeMetadata: newer entries win per key.
func mergeMetadata(old, new *Metadata) *Metadata {
	switch {
	case old == nil:
		return new
	case new == nil:
		return old
	}
	out := &Metadata{}
	out.Tags = mergeMap(old.Tags, new.Tags)
	out.Properties = mergeMap(old.Properties, new.Properties)
	switch {
	case len(old.Sensitive) == 0:
		out.Sensitive = new.Sensitive
	case len(new.Sensitive) == 0:
		out.Sensitive = old.Sensitive
	default:
		out.Sensitive = sortedSet(append(slices.Clone(old.Sensitive), new.Sensitive...))
	}
	return out
}

func mergeMap[V any](old, new map[string]V) map[string]V {
	switch {
	case len(old) == 0:
		return new
	case len(new) == 0:
		return old
	}
	out := make(map[string]V, len(old)+len(new))
	for k, v := range old {
		out[k] = v
	}
	for k, v := range new {
		out[k] = v
	}
	return out
}

func (m *Metadata) updateHash(h hash.Hash) {
	for _, k := range sortedKeys(m.Tags) {
		h.Write([]byte(k))
		for _, v := range m.Tags[k] {
			h.Write([]byte(v))
		}
	}
	for _, k := range sortedKeys(m.Properties) {
		h.Write([]byte(k))
		h.Write([]byte(m.Properties[k]))
	}
	for _, s := range m.Sensitive {
		h.Write([]byte(s))
	}
}

// RuleSet is a schema's data-contract rules.
type RuleSet struct {
	MigrationRules []Rule  `json:"migrationRules,omitempty"`
	DomainRules    []Rule  `json:"domainRules,omitempty"`
	EncodingRules  []Rule  `json:"encodingRules,omitempty"`
	EnableAt       *string `json:"enableAt,omitempty"`
}

// Rule is one data-contract rule.
type Rule struct {
	Name      string            `json:"name,omitempty"`
	Doc       string            `json:"doc,omitempty"`
	Kind      string            `json:"kind,omitempty"`
	Mode      string            `json:"mode,omitempty"`
	Type      string            `json:"type,omitempty"`
	Tags      []string          `json:"tags,omitempty"`
	Params    map[string]string `json:"params,omitempty"`
	Expr      string            `json:"expr,omitempty"`
	OnSuccess string            `json:"onSuccess,omitempty"`
	OnFailure string            `json:"onFailure,omitempty"`
	Disabled  bool              `json:"disabled"`
}

var (
	ruleKinds    = []string{"TRANSFORM", "CONDITION"}
	ruleModes    = []string{"UPGRADE", "DOWNGRADE", "UPDOWN", "WRITE", "READ", "WRITEREAD"}
	environments = []string{"ALL", "CLIENT", "GATEWAY", "SERVER", "NONE"}
)

// normalize applies Rule's and RuleSet's constructors: default kind and
// mode, sorted tags. It reports an enum value Jackson would refuse.
func (rs *RuleSet) normalize() error {
	if rs == nil {
		return nil
	}
	if rs.EnableAt != nil && !slices.Contains(environments, *rs.EnableAt) {
		return fmt.Errorf("Cannot deserialize value of type `ExecutionEnvironment` from String %q: not one of the values accepted for Enum class: %v", *rs.EnableAt, environments)
	}
	for _, rules := range [][]Rule{rs.MigrationRules, rs.DomainRules, rs.EncodingRules} {
		for i := range rules {
			r := &rules[i]
			if r.Kind == "" {
				r.Kind = "TRANSFORM"
			} else if !slices.Contains(ruleKinds, r.Kind) {
				return fmt.Errorf("Cannot deserialize value of type `RuleKind` from String %q: not one of the values accepted for Enum class: %v", r.Kind, ruleKinds)
			}
			if r.Mode == "" {
				r.Mode = "WRITEREAD"
			} else if !slices.Contains(ruleModes, r.Mode) {
				return fmt.Errorf("Cannot deserialize value of type `RuleMode` from String %q: not one of the values accepted for Enum class: %v", r.Mode, ruleModes)
			}
			r.Tags = sortedSet(r.Tags)
		}
	}
	return nil
}

// validate is RuleSet.validate: unique, well-formed names, a type, and
// modes that fit the phase.
func (rs *RuleSet) validate() error {
	if rs == nil {
		return nil
	}
	names := map[string]bool{}
	phases := []struct {
		rules     []Rule
		migration bool
		msg       string
	}{
		{rs.MigrationRules, true, "Migration rules can only be UPGRADE, DOWNGRADE, UPDOWN"},
		{rs.DomainRules, false, "Domain rules can only be WRITE, READ, WRITEREAD"},
		{rs.EncodingRules, false, "Encoding rules can only be WRITE, READ, WRITEREAD"},
	}
	for _, ph := range phases {
		for _, r := range ph.rules {
			if names[r.Name] {
				return fmt.Errorf("Found rule with duplicate name '%s'", r.Name)
			}
			names[r.Name] = true
			if err := r.validate(); err != nil {
				return err
			}
			migration := r.Mode == "UPGRADE" || r.Mode == "DOWNGRADE" || r.Mode == "UPDOWN"
			if migration != ph.migration {
				return fmt.Errorf("%s", ph.msg)
			}
		}
	}
	return nil
}

const ruleNameMaxLength = 256

func (r *Rule) validate() error {
	switch {
	case r.Name == "":
		// Jackson leaves an absent name null and an empty one "": both
		// reach us as "".
		return fmt.Errorf("Empty rule name")
	case len([]rune(r.Name)) > ruleNameMaxLength:
		return fmt.Errorf("Rule name too long")
	}
	for i, c := range []rune(r.Name) {
		ok := unicode.IsLetter(c) || c == '_' || i > 0 && (unicode.IsDigit(c) || c == '-')
		if !ok {
			if i == 0 {
				return fmt.Errorf("Illegal initial character in rule name: %s", r.Name)
			}
			return fmt.Errorf("Illegal character in rule name: %s", r.Name)
		}
	}
	if r.Type == "" {
		return fmt.Errorf("Missing rule type")
	}
	for _, action := range []string{r.OnSuccess, r.OnFailure} {
		if r.Mode != "WRITEREAD" && r.Mode != "UPDOWN" && slices.Contains([]byte(action), ',') {
			return fmt.Errorf("Multiple actions only valid with WRITEREAD and UPDOWN")
		}
	}
	return nil
}

// mergeRuleSets is RuleSet.mergeRuleSets: a newer rule replaces an older
// one of the same name.
func mergeRuleSets(old, new *RuleSet) *RuleSet {
	switch {
	case old == nil:
		return new
	case new == nil:
		return old
	}
	out := &RuleSet{
		MigrationRules: mergeRules(old.MigrationRules, new.MigrationRules),
		DomainRules:    mergeRules(old.DomainRules, new.DomainRules),
		EncodingRules:  mergeRules(old.EncodingRules, new.EncodingRules),
		EnableAt:       old.EnableAt,
	}
	if new.EnableAt != nil {
		out.EnableAt = new.EnableAt
	}
	return out
}

func mergeRules(old, new []Rule) []Rule {
	switch {
	case len(old) == 0:
		return new
	case len(new) == 0:
		return old
	}
	out := make([]Rule, 0, len(old)+len(new))
	for _, r := range old {
		if !slices.ContainsFunc(new, func(n Rule) bool { return n.Name == r.Name }) {
			out = append(out, r)
		}
	}
	return append(out, new...)
}

func (rs *RuleSet) updateHash(h hash.Hash) {
	for _, rules := range [][]Rule{rs.MigrationRules, rs.DomainRules, rs.EncodingRules} {
		for i := range rules {
			rules[i].updateHash(h)
		}
	}
	if rs.EnableAt != nil {
		h.Write([]byte(*rs.EnableAt))
	}
}

func (r *Rule) updateHash(h hash.Hash) {
	for _, s := range []string{r.Name, r.Doc, r.Kind, r.Mode, r.Type} {
		h.Write([]byte(s))
	}
	for _, t := range r.Tags {
		h.Write([]byte(t))
	}
	for _, k := range sortedKeys(r.Params) {
		h.Write([]byte(k))
		h.Write([]byte(r.Params[k]))
	}
	for _, s := range []string{r.Expr, r.OnSuccess, r.OnFailure} {
		h.Write([]byte(s))
	}
	if r.Disabled {
		h.Write([]byte{1})
	}
}

func (rs *RuleSet) hasRulesOfType(typ string) bool {
	if rs == nil {
		return false
	}
	for _, rules := range [][]Rule{rs.MigrationRules, rs.DomainRules, rs.EncodingRules} {
		for _, r := range rules {
			if r.Type == typ {
				return true
			}
		}
	}
	return false
}

// Reference names another registered schema that a schema imports.
// Version -1 asks for the latest version at registration.
type refEntity = Reference

// schemaHash is Confluent's MD5 of a schema (Schema.updateHash): the
// schema text, its references, its metadata and rule set. It identifies a
// schema within a context (same hash, same id) and is the guid.
func schemaHash(text string, refs []Reference, md *Metadata, rs *RuleSet) [16]byte {
	h := md5.New()
	h.Write([]byte(text))
	var v [4]byte
	for _, r := range refs {
		h.Write([]byte(r.Name))
		h.Write([]byte(r.Subject))
		binary.BigEndian.PutUint32(v[:], uint32(int32(r.Version)))
		h.Write(v[:])
	}
	if md != nil {
		h.Write([]byte{1})
		md.updateHash(h)
	}
	if rs != nil {
		h.Write([]byte{1})
		rs.updateHash(h)
	}
	var out [16]byte
	h.Sum(out[:0])
	return out
}

// guid formats a schema hash as Java's UUID.toString does.
func guid(sum [16]byte) string {
	const hexdigits = "0123456789abcdef"
	b := make([]byte, 0, 36)
	for i, c := range sum {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			b = append(b, '-')
		}
		b = append(b, hexdigits[c>>4], hexdigits[c&15])
	}
	return string(b)
}

func sortedSet(s []string) []string {
	if len(s) == 0 {
		return s
	}
	s = slices.Clone(s)
	sort.Strings(s)
	return slices.Compact(s)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func itoa(v int32) string { return strconv.Itoa(int(v)) }
