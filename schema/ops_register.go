package schema

import (
	"context"
	"fmt"
	"math"
	"slices"
)

// Version is a registered schema version as the registry returns it: a
// copy, safe to keep.
type Version struct {
	Subject    string
	Version    int32
	ID         int32
	Type       string
	References []Reference
	Metadata   *Metadata
	RuleSet    *RuleSet
	Schema     string
	Deleted    bool
	TS         int64 // when it was written (record timestamp, ms); 0 if not yet
	GUID       string
}

func (v *version) export() *Version {
	return &Version{
		Subject: v.Subject, Version: v.Version, ID: v.ID, Type: v.SchemaType,
		References: slices.Clone(v.References), Metadata: v.Metadata.clone(), RuleSet: v.RuleSet,
		Schema: v.Schema, Deleted: v.Deleted, TS: v.ts, GUID: guid(v.sum),
	}
}

// SchemaRequest is what the register, lookup and compatibility endpoints
// take (RegisterSchemaRequest).
type SchemaRequest struct {
	Schema     string
	SchemaType string // "" = AVRO
	References []Reference
	Metadata   *Metadata
	RuleSet    *RuleSet
	Version    int32 // 0: the next; IMPORT mode may give one
	ID         int32 // -1 or 0 with HasID false: none; IMPORT mode gives one
	HasID      bool
}

func (q *SchemaRequest) candidate(subject string) *candidate {
	typ := q.SchemaType
	if typ == "" {
		typ = "AVRO"
	}
	id := int32(-1)
	if q.HasID {
		id = q.ID
	}
	return &candidate{subject: subject, typ: typ, text: q.Schema, refs: slices.Clone(q.References),
		metadata: q.Metadata.clone(), ruleSet: q.RuleSet, version: q.Version, id: id}
}

// Register registers a schema under subject (POST
// /subjects/{s}/versions): Confluent's registerOrForward and register.
// A schema already registered under the subject is answered with its
// version and id without a write, whatever the mode.
func (r *Registry) Register(ctx context.Context, subject string, req *SchemaRequest, normalize bool) (*Version, *Error) {
	if err := req.RuleSet.validate(); err != nil {
		return nil, errInvalidRuleSet(err.Error())
	}
	if !validSubject(subject, false, true) {
		return nil, errInvalidSubject(subject)
	}
	subject = normalizeSubject(subject)
	c := req.candidate(subject)
	r.mu.RLock()
	cfg := r.configInScope(subject)
	if !normalize {
		normalize = cfg.Normalize != nil && *cfg.Normalize
	}
	if !cfg.hasDefaultsOrOverrides() {
		existing, e := r.lookupUnder(cfg, c.clone(), normalize, false, c.version == -1)
		if e == nil && existing != nil {
			if found := r.existingMatch(c, existing); found != nil {
				r.mu.RUnlock()
				return found.export(), nil
			}
		}
	}
	r.mu.RUnlock()

	if e := r.beginWrite(ctx); e != nil {
		return nil, e
	}
	defer r.endWrite()
	return r.register(ctx, c, normalize)
}

// existingMatch is registerOrForward's answer from a lookup: the version
// found when the request asks for no particular version or id, or for
// those of what was found.
func (r *Registry) existingMatch(c *candidate, existing *version) *version {
	switch {
	case c.version == 0 || c.version == -1:
		if c.id < 0 || c.id == existing.ID {
			return existing
		}
	case existing.ID == c.id:
		if existing.Version == c.version {
			return existing
		}
		// Imported twice under different versions.
		if older := r.st.get(c.subject, c.version); older != nil && !older.Deleted && older.ID == existing.ID && older.sum == existing.sum {
			return older
		}
	}
	return nil
}

// register is KafkaSchemaRegistry.register; the caller holds writeMu.
func (r *Registry) register(ctx context.Context, c *candidate, normalize bool) (*Version, *Error) {
	r.mu.RLock()
	v, outs, e := r.planRegister(c, normalize)
	r.mu.RUnlock()
	if e != nil || outs == nil {
		if v != nil {
			return v.export(), e
		}
		return nil, e
	}
	if e := r.write(ctx, outs...); e != nil {
		return nil, e
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	if got := r.st.get(c.subject, c.version); got != nil && got.ID == c.id {
		return got.export(), nil
	}
	// Applied and then changed by another writer's record already: answer
	// what was registered.
	return (&version{schemaValue: schemaValue{Subject: c.subject, Version: c.version, ID: c.id, SchemaType: c.typ,
		References: c.refs, Metadata: c.metadata, RuleSet: c.ruleSet, Schema: c.text}, sum: c.sum()}).export(), nil
}

// planRegister decides a registration: an existing version to answer, or
// the records to write (c gets its version and id). The caller holds mu.
func (r *Registry) planRegister(c *candidate, normalize bool) (*version, []out, *Error) {
	subject := c.subject
	mode := r.modeInScope(subject)
	qctx := parseSubject(subject).qualifiedContext()
	switch {
	case readOnly(mode):
		return nil, nil, errNotPermitted("Subject %s in context %s is in read-only mode", subject, qctx)
	case c.id >= 0 && !importLike(mode):
		return nil, nil, errNotPermitted("Subject %s in context %s is not in import mode", subject, qctx)
	case c.id < 0 && mode != modeReadWrite:
		return nil, nil, errNotPermitted("Subject %s in context %s is not in read-write mode", subject, qctx)
	}
	var all []*version
	if e := r.st.subjects[subject]; e != nil {
		all = e.versions
	}
	newVersion := int32(1)
	var deleted, undeleted []*version // undeleted newest first
	for i := len(all) - 1; i >= 0; i-- {
		v := all[i]
		newVersion = max(newVersion, v.Version+1)
		if v.Deleted {
			deleted = append(deleted, v)
		} else {
			undeleted = append(undeleted, v)
		}
	}
	cfg := r.configInScope(subject)
	if !importLike(mode) {
		var prev *version
		if len(undeleted) > 0 {
			prev = undeleted[0]
		}
		if e := r.populateFromPrevious(cfg, c, prev, newVersion); e != nil {
			return nil, nil, e
		}
	}
	if e := r.canonicalize(c, normalize, c.id < 0); e != nil {
		return nil, nil, e
	}
	ctx := contextOf(subject)
	schemaID := c.id
	if id, subjects, ok := r.st.idAndSubjects(ctx, c.sum()); ok && (schemaID < 0 || schemaID == id) {
		if ver, has := subjects.get(subject); has && c.version == 0 {
			if v := r.st.get(subject, ver); v != nil && !v.Deleted {
				return v, nil, nil
			}
		}
		schemaID = id
	}
	if c.version == 0 {
		for _, v := range undeleted {
			if (schemaID < 0 || schemaID == v.ID) && r.canLookup(c, v) {
				return v, nil, nil
			}
		}
	}
	if !importLike(mode) {
		if msgs, e := r.compatibleWithPrevious(cfg, c, undeleted); e != nil {
			return nil, nil, e
		} else if len(msgs) > 0 {
			return nil, nil, errIncompatible(subject, msgs)
		}
	}
	var outs []out
	if q := parseSubject(subject); q.context != defaultContext && !r.st.contexts[q.context] {
		outs = append(outs, out{recordKey{Type: keyContext, Tenant: defaultTenant, Context: q.context},
			contextValue{Tenant: defaultTenant, Context: q.context}})
	}
	switch {
	case c.version <= 0:
		c.version = newVersion
	case c.version != newVersion && !importLike(mode):
		return nil, nil, errInvalidSchema("Version is not one more than previous version")
	}
	if schemaID >= 0 {
		if other := r.st.keyByID(ctx, schemaID, ""); other != nil && !r.sameSchema(c, other) {
			return nil, nil, errNotPermitted("Overwrite new schema with id %d in context %s is not permitted.", schemaID, parseSubject(subject).qualifiedContext())
		}
		c.id = schemaID
	} else {
		sp := r.st.spaces[ctx]
		c.id = 1
		if sp != nil {
			if sp.maxID >= math.MaxInt32-1 {
				return nil, nil, errStore("Error while registering the schema due to generating an ID that is already in use", fmt.Errorf("context %s has used every id", ctx))
			}
			c.id = max(sp.maxID+1, 1)
			for sp.byID[c.id] != nil {
				c.id++
			}
		}
	}
	for _, d := range deleted {
		// Older soft-deleted versions of the same schema give way to the
		// new one, unless something still references them.
		if d.ID == c.id && d.Version < c.version && len(r.st.referencedBy(subject, d.Version)) == 0 {
			outs = append(outs, out{recordKey{Type: keySchema, Subject: subject, Version: d.Version}, nil})
		}
	}
	outs = append(outs, out{recordKey{Type: keySchema, Subject: subject, Version: c.version}, &schemaValue{
		Subject: subject, Version: c.version, ID: c.id, SchemaType: c.typ, References: c.refs,
		Metadata: c.metadata, RuleSet: c.ruleSet, Schema: c.text,
	}})
	return nil, outs, nil
}

// sameSchema is checkIfSchemaWithIdExist's comparison: an imported id may
// name an existing schema only with the same content.
func (r *Registry) sameSchema(c *candidate, v *version) bool {
	return c.typ == v.SchemaType && c.text == v.Schema && sameRefs(c.refs, v.References) &&
		sameMetadata(c.metadata, v.Metadata) && sameRuleSet(c.ruleSet, v.RuleSet)
}

// populateFromPrevious is maybePopulateFromPrevious: an empty schema
// re-registers the previous one (with new metadata or rules), and the
// config's default and override metadata and rules are merged in.
func (r *Registry) populateFromPrevious(cfg *configValue, c *candidate, prev *version, newVersion int32) *Error {
	if isBlank(c.text) {
		if prev == nil {
			return errInvalidSchema("Empty schema")
		}
		c.text, c.typ, c.refs = prev.Schema, prev.SchemaType, slices.Clone(prev.References)
	}
	nv := newVersion
	r.setMetadataRuleSet(cfg, c, prev, &nv)
	return nil
}

// setMetadataRuleSet is maybeSetMetadataRuleSet.
func (r *Registry) setMetadataRuleSet(cfg *configValue, c *candidate, prev *version, newVersion *int32) {
	specific := c.metadata
	if specific == nil && prev != nil {
		specific = prev.Metadata.clone()
	}
	md := mergeMetadata(mergeMetadata(cfg.DefaultMetadata, specific), cfg.OverrideMetadata)
	specificRules := c.ruleSet
	if specificRules == nil && prev != nil {
		specificRules = prev.RuleSet
	}
	rs := mergeRuleSets(mergeRuleSets(cfg.DefaultRuleSet, specificRules), cfg.OverrideRuleSet)
	if newVersion != nil {
		if _, has := md.property(confluentVersion); c.version != 0 || has {
			md = md.withProperty(confluentVersion, itoa(*newVersion))
		}
	}
	if md != nil || rs != nil {
		c.metadata, c.ruleSet = md.clone(), rs
	}
}

func isBlank(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] > ' ' {
			return false
		}
	}
	return true
}

// compatibleWithPrevious is isCompatibleWithPrevious over the undeleted
// versions (newest first), filtered by the config's compatibility group.
func (r *Registry) compatibleWithPrevious(cfg *configValue, c *candidate, undeleted []*version) ([]string, *Error) {
	level := r.opts.DefaultCompatibility
	if cfg.CompatibilityLevel != nil {
		level = *cfg.CompatibilityLevel
	}
	group := ""
	if cfg.CompatibilityGroup != nil {
		group = *cfg.CompatibilityGroup
	}
	groupValue, _ := c.metadata.property(group)
	var prev []prior
	for i := len(undeleted) - 1; i >= 0; i-- {
		v := undeleted[i]
		if group != "" {
			if gv, _ := v.Metadata.property(group); gv != groupValue {
				continue
			}
		}
		prev = append(prev, prior{typ: v.SchemaType, version: v.Version, text: v.Schema})
	}
	if level == levelNone || len(prev) == 0 {
		return nil, nil
	}
	// Only the versions the level looks at are parsed.
	first := len(prev) - 1
	if level == levelBackwardTransitive || level == levelForwardTransitive || level == levelFullTransitive {
		first = 0
	}
	prev = prev[first:]
	j := 0
	for i := len(undeleted) - 1; i >= 0 && j < len(prev); i-- {
		v := undeleted[i]
		if v.Version != prev[j].version {
			continue
		}
		p, e := r.parseStored(v)
		if e != nil {
			return nil, e
		}
		prev[j].parsed = p
		j++
	}
	msgs := checkLevel(level, c.typ, c.parsed, prev)
	if len(msgs) > 0 {
		validate := cfg.ValidateFields != nil && *cfg.ValidateFields
		msgs = append(msgs, fmt.Sprintf("{validateFields: '%t', compatibility: '%s'}", validate, level))
	}
	return msgs, nil
}

// Lookup finds a schema under subject (POST /subjects/{s}):
// lookUpSchemaUnderSubjectUsingContexts.
func (r *Registry) Lookup(subject string, req *SchemaRequest, normalize, lookupDeleted bool) (*Version, *Error) {
	subject = normalizeSubject(subject)
	r.mu.RLock()
	defer r.mu.RUnlock()
	cfg := r.configInScope(subject)
	if !normalize {
		normalize = cfg.Normalize != nil && *cfg.Normalize
	}
	v, e := r.lookupWithMetadata(subject, req.candidate(subject), normalize, lookupDeleted)
	if e != nil {
		return nil, e
	}
	if v == nil && parseSubject(subject).context == defaultContext {
		// An unqualified subject is also looked for in every context.
		for _, ctx := range r.st.sortedContexts()[1:] {
			q := qualified{context: ctx, name: subject}.String()
			if found, e := r.lookupWithMetadata(q, req.candidate(q), normalize, lookupDeleted); e == nil && found != nil {
				v = found
				break
			}
		}
	}
	if v == nil {
		if !r.st.hasSubjects(subject, lookupDeleted) {
			return nil, errSubjectNotFound(subject)
		}
		return nil, errSchemaNotFound()
	}
	return v.export(), nil
}

// lookupWithMetadata is the public lookUpSchemaUnderSubject: as sent, then
// with the metadata and rules a registration would have merged in.
func (r *Registry) lookupWithMetadata(subject string, c *candidate, normalize, lookupDeleted bool) (*version, *Error) {
	cfg := r.configInScope(subject)
	v, e := r.lookupUnder(cfg, c.clone(), normalize, lookupDeleted, false)
	if e != nil || v != nil {
		return v, e
	}
	var prev *version
	if en := r.st.subjects[subject]; en != nil {
		prev = en.latest()
	}
	if prev == nil {
		return nil, nil
	}
	next := c.clone()
	r.setMetadataRuleSet(cfg, next, prev, nil)
	if sameMetadata(next.metadata, c.metadata) && sameRuleSet(next.ruleSet, c.ruleSet) &&
		(next.metadata == nil) == (c.metadata == nil) {
		return nil, nil
	}
	return r.lookupUnder(cfg, next, normalize, lookupDeleted, false)
}

// lookupUnder is the protected lookUpSchemaUnderSubject: by hash, then by
// canLookup against the latest version or every version, newest first.
func (r *Registry) lookupUnder(cfg *configValue, c *candidate, normalize, lookupDeleted, latestOnly bool) (*version, *Error) {
	if e := r.canonicalize(c, normalize, false); e != nil {
		return nil, e
	}
	subject := c.subject
	if !latestOnly {
		if _, subjects, ok := r.st.idAndSubjects(contextOf(subject), c.sum()); ok {
			if ver, has := subjects.get(subject); has {
				if v := r.st.get(subject, ver); v != nil && (lookupDeleted || !v.Deleted) {
					return v, nil
				}
			}
		}
	}
	e := r.st.subjects[subject]
	if e == nil {
		return nil, nil
	}
	if latestOnly {
		if prev := e.latest(); prev != nil && r.canLookup(c, prev) {
			return prev, nil
		}
		return nil, nil
	}
	for i := len(e.versions) - 1; i >= 0; i-- {
		v := e.versions[i]
		if (lookupDeleted || !v.Deleted) && r.canLookup(c, v) {
			return v, nil
		}
	}
	return nil, nil
}

// CheckCompatibility tests a schema against a version of subject ("latest"
// is version -1) or, with all set, against every undeleted version
// (POST /compatibility/subjects/{s}/versions[/{v}]). It returns the
// reasons it is incompatible; none when it is compatible. An invalid
// schema is a reason with verbose, else an error.
func (r *Registry) CheckCompatibility(subject string, ver int32, all bool, req *SchemaRequest, normalize, verbose bool) ([]string, *Error) {
	subject = normalizeSubject(subject)
	r.mu.RLock()
	defer r.mu.RUnlock()
	var against []*version
	if e := r.st.subjects[subject]; e != nil {
		for _, v := range e.versions {
			if v.Deleted {
				continue
			}
			if all || (ver > 0 && v.Version == ver) {
				against = append(against, v)
			}
		}
		if !all && ver == -1 {
			if l := e.latest(); l != nil {
				against = []*version{l}
			}
		}
	}
	if !all && ver > 0 && len(against) == 0 {
		return nil, errVersionNotFound(ver)
	}
	cfg := r.configInScope(subject)
	if !normalize {
		normalize = cfg.Normalize != nil && *cfg.Normalize
	}
	c := req.candidate(subject)
	if e := r.canonicalize(c, normalize, true); e != nil {
		if verbose && e.Code == CodeInvalidSchema {
			return []string{e.Message}, nil
		}
		return nil, e
	}
	undeleted := make([]*version, 0, len(against))
	for i := len(against) - 1; i >= 0; i-- {
		undeleted = append(undeleted, against[i])
	}
	return r.compatibleWithPrevious(cfg, c, undeleted)
}
