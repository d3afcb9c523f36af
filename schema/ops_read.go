package schema

import (
	"context"
	"encoding/hex"
	"net/http"
	"sort"
	"strings"
)

// Filter is LookupFilter: which versions a listing includes.
type Filter int

const (
	FilterDefault           Filter = iota // not deleted
	FilterIncludeDeleted                  // all
	FilterDeletedOnly                     // deleted only
	FilterDeletedAsNegative               // all, deleted ones as -version
)

func (f Filter) includes(deleted bool) bool {
	switch f {
	case FilterDefault:
		return !deleted
	case FilterDeletedOnly:
		return deleted
	}
	return true
}

// GetVersion is GET /subjects/{s}/versions/{v} (v -1: the latest not
// deleted): getUsingContexts, which also looks in every context for an
// unqualified subject it does not find.
func (r *Registry) GetVersion(subject string, ver int32, lookupDeleted bool) (*Version, *Error) {
	subject = normalizeSubject(subject)
	r.mu.RLock()
	defer r.mu.RUnlock()
	v := r.version(subject, ver, lookupDeleted)
	if v == nil && parseSubject(subject).context == defaultContext {
		for _, ctx := range r.st.sortedContexts()[1:] {
			if v = r.version(qualified{context: ctx, name: subject}.String(), ver, lookupDeleted); v != nil {
				break
			}
		}
	}
	if v == nil {
		if !r.st.hasSubjects(subject, lookupDeleted) {
			return nil, errSubjectNotFound(subject)
		}
		return nil, errVersionNotFound(ver)
	}
	return v.export(), nil
}

// version is AbstractSchemaRegistry.get(subject, version, deleted).
func (r *Registry) version(subject string, ver int32, lookupDeleted bool) *version {
	if ver == -1 {
		if e := r.st.subjects[subject]; e != nil {
			return e.latest()
		}
		return nil
	}
	v := r.st.get(subject, ver)
	if v == nil || (v.Deleted && !lookupDeleted) {
		return nil
	}
	return v
}

// Format renders a version's schema in a named format (the format query
// parameter); "" is the stored canonical text.
func (r *Registry) Format(v *Version, format string) (string, *Error) {
	if strings.TrimSpace(format) == "" {
		return v.Schema, nil
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	stored := r.st.get(v.Subject, v.Version)
	if stored == nil || stored.sum != schemaHash(v.Schema, v.References, v.Metadata, v.RuleSet) {
		stored = &version{schemaValue: schemaValue{Subject: v.Subject, SchemaType: v.Type, Schema: v.Schema,
			References: v.References, Metadata: v.Metadata, RuleSet: v.RuleSet}}
		stored.sum = schemaHash(v.Schema, v.References, v.Metadata, v.RuleSet)
	}
	p, e := r.parseStored(stored)
	if e != nil {
		return "", e
	}
	s, err := p.Formatted(format)
	if err != nil {
		return "", errBadRequest(err.Error())
	}
	return s, nil
}

// ListVersions is GET /subjects/{s}/versions.
func (r *Registry) ListVersions(subject string, f Filter) ([]int32, *Error) {
	subject = normalizeSubject(subject)
	r.mu.RLock()
	defer r.mu.RUnlock()
	if !r.st.hasSubjects(subject, f != FilterDefault) {
		return nil, errSubjectNotFound(subject)
	}
	out := []int32{}
	if e := r.st.subjects[subject]; e != nil {
		for _, v := range e.versions {
			if !f.includes(v.Deleted) {
				continue
			}
			n := v.Version
			if f == FilterDeletedAsNegative && v.Deleted {
				n = -n
			}
			out = append(out, n)
		}
	}
	return out, nil
}

// ListSubjects is GET /subjects: sorted, every context unless prefix
// narrows it (":*:" is every context, ":.ctx:" one).
func (r *Registry) ListSubjects(prefix string, f Filter) []string {
	if prefix == "" {
		prefix = contextWildcard
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := []string{}
	for name, e := range r.st.subjects {
		if !prefixMatches(prefix, name) {
			continue
		}
		allDeleted := true
		for _, v := range e.versions {
			allDeleted = allDeleted && v.Deleted
		}
		if f.includes(allDeleted) {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// prefixMatches is allVersions(prefix, isPrefix=true)'s key range: a plain
// prefix within its context; ":*:" every context, ":*:p" a name prefix in
// every context.
func prefixMatches(prefix, subject string) bool {
	if i := strings.Index(prefix, contextWildcard); i >= 0 {
		namePrefix := prefix[i+len(contextWildcard):]
		if namePrefix == "" {
			return true
		}
		return strings.HasPrefix(parseSubject(subject).name, namePrefix)
	}
	p, q := parseSubject(prefix), parseSubject(subject)
	return p.context == q.context && strings.HasPrefix(q.name, p.name)
}

// ListSchemas is GET /schemas: versions of the subjects under prefix
// (default context without one), sorted by subject and version; latestOnly
// keeps each subject's last version the filter includes; ruleType keeps
// versions with a rule of that type.
func (r *Registry) ListSchemas(prefix string, deleted, latestOnly bool, ruleType string) []*Version {
	f := FilterDefault
	if deleted {
		f = FilterIncludeDeleted
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	var out []*Version
	for name, e := range r.st.subjects {
		if !prefixMatches(prefix, name) {
			continue
		}
		var picked []*version
		for _, v := range e.versions {
			if f.includes(v.Deleted) {
				picked = append(picked, v)
			}
		}
		if latestOnly && len(picked) > 0 {
			picked = picked[len(picked)-1:]
		}
		for _, v := range picked {
			if ruleType != "" && !v.RuleSet.hasRulesOfType(ruleType) {
				continue
			}
			out = append(out, v.export())
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Subject != out[j].Subject {
			return out[i].Subject < out[j].Subject
		}
		return out[i].Version < out[j].Version
	})
	return out
}

// SchemaByID is GET /schemas/ids/{id}: the schema with id in the context of
// subject (the default context without one, and for an unqualified subject
// every context in turn). It is found even when all its versions are
// deleted. maxID is the context's highest id.
func (r *Registry) SchemaByID(id int32, subject string) (v *Version, maxID int32, e *Error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	found := r.keyUsingContexts(id, subject)
	if found == nil {
		return nil, 0, errSchemaIDNotFound(id)
	}
	ctx := contextOf(found.Subject)
	if sp := r.st.spaces[ctx]; sp != nil {
		maxID = sp.maxID
	}
	return found.export(), max(maxID, 1), nil
}

// keyUsingContexts is getSchemaKeyUsingContexts: by id in the subject's
// context (under the subject when it has a name); an unqualified subject
// not holding the id is looked for in every context, then any subject of
// the default context holding it is taken.
func (r *Registry) keyUsingContexts(id int32, subject string) *version {
	q := parseSubject(normalizeSubject(subject))
	name := ""
	if q.name != "" {
		name = q.String()
	}
	v := r.st.keyByID(q.context, id, name)
	if v != nil || q.name == "" || q.context != defaultContext {
		return v
	}
	for _, ctx := range r.st.sortedContexts()[1:] {
		if v := r.st.keyByID(ctx, id, qualified{context: ctx, name: q.name}.String()); v != nil {
			return v
		}
	}
	return r.st.keyByID(defaultContext, id, "")
}

// VersionsForID is GET /schemas/ids/{id}/versions (and, by subject,
// /subjects): every (subject, version) holding the schema in its context.
func (r *Registry) VersionsForID(id int32, subject string, lookupDeleted bool) ([]SubjectVersion, *Error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	found := r.keyUsingContexts(id, subject)
	if found == nil {
		return nil, errSchemaNotFound()
	}
	ctx := contextOf(found.Subject)
	out := []SubjectVersion{}
	if sp := r.st.spaces[ctx]; sp != nil {
		for _, h := range sp.byID[found.ID] {
			if v := r.st.get(h.subject, h.version); v != nil && (lookupDeleted || !v.Deleted) {
				out = append(out, SubjectVersion{Subject: h.subject, Version: h.version})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Subject != out[j].Subject {
			return out[i].Subject < out[j].Subject
		}
		return out[i].Version < out[j].Version
	})
	return out, nil
}

// SubjectVersion is one (subject, version) of an id.
type SubjectVersion struct {
	Subject string `json:"subject"`
	Version int32  `json:"version"`
}

// ReferencedBy is GET /subjects/{s}/versions/{v}/referencedby: the ids of
// the schemas referencing the version, sorted by context and id.
func (r *Registry) ReferencedBy(subject string, ver int32, lookupDeleted bool) ([]int32, *Error) {
	subject = normalizeSubject(subject)
	r.mu.RLock()
	defer r.mu.RUnlock()
	v := r.version(subject, ver, true)
	if v == nil {
		if !r.st.hasSubjects(subject, true) {
			return nil, errSubjectNotFound(subject)
		}
		return nil, errVersionNotFound(ver)
	}
	var ids []ctxID
	for id := range r.st.referencedBy(subject, v.Version) {
		if !lookupDeleted && !r.idLive(id) {
			continue
		}
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool {
		if ids[i].context != ids[j].context {
			return ids[i].context < ids[j].context
		}
		return ids[i].id < ids[j].id
	})
	out := make([]int32, len(ids))
	for i, id := range ids {
		out[i] = id.id
	}
	return out, nil
}

// idLive reports an id with a version that is not deleted.
func (r *Registry) idLive(id ctxID) bool {
	sp := r.st.spaces[id.context]
	if sp == nil {
		return false
	}
	for _, h := range sp.byID[id.id] {
		if v := r.st.get(h.subject, h.version); v != nil && !v.Deleted {
			return true
		}
	}
	return false
}

// LatestWithMetadata is GET /subjects/{s}/metadata: the newest version
// whose metadata properties include every key and value asked for.
func (r *Registry) LatestWithMetadata(subject string, want map[string]string, lookupDeleted bool) (*Version, *Error) {
	subject = normalizeSubject(subject)
	r.mu.RLock()
	defer r.mu.RUnlock()
	if e := r.st.subjects[subject]; e != nil {
		for i := len(e.versions) - 1; i >= 0; i-- {
			v := e.versions[i]
			if v.Deleted && !lookupDeleted || v.Metadata == nil {
				continue
			}
			ok := true
			for k, val := range want {
				if got, has := v.Metadata.Properties[k]; !has || got != val {
					ok = false
					break
				}
			}
			if ok {
				return v.export(), nil
			}
		}
	}
	if !r.st.hasSubjects(subject, lookupDeleted) {
		return nil, errSubjectNotFound(subject)
	}
	return nil, errSchemaNotFound()
}

// Contexts is GET /contexts: "." and every context with a CONTEXT record.
func (r *Registry) Contexts() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.st.sortedContexts()
}

// DeleteContext is DELETE /contexts/{context}: only an empty context.
// The context is delimited (":.ctx:", as Confluent takes it) or a bare
// name (".ctx" or "ctx").
func (r *Registry) DeleteContext(ctx context.Context, context string) *Error {
	if !strings.HasPrefix(context, contextDelimiter) {
		name := strings.TrimSuffix(context, contextDelimiter)
		if !strings.HasPrefix(name, ".") {
			name = "." + name
		}
		context = contextDelimiter + name + contextDelimiter
	}
	s := normalizeSubject(context)
	q := parseSubject(s)
	if q.context == defaultContext || q.name != "" {
		return errContextNotEmpty(context)
	}
	if e := r.beginWrite(ctx); e != nil {
		return e
	}
	defer r.endWrite()
	r.mu.RLock()
	busy := r.st.hasSubjects(s, true)
	r.mu.RUnlock()
	if busy {
		return errContextNotEmpty(s)
	}
	return r.write(ctx, out{recordKey{Type: keyContext, Tenant: defaultTenant, Context: q.context}, nil})
}

// SchemaByGUID is GET /schemas/guids/{guid}: the schema whose hash the
// guid is (a UUID or 32 hex digits), in the default context first.
func (r *Registry) SchemaByGUID(g string) (*Version, *Error) {
	sum, ok := parseGUID(g)
	if !ok {
		return nil, newError(http.StatusNotFound, CodeSchemaNotFound, "Schema %s not found", g)
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, ctx := range r.st.sortedContexts() {
		sp := r.st.spaces[ctx]
		if sp == nil {
			continue
		}
		if id, ok := sp.byHash[sum]; ok {
			if v := r.st.keyByID(ctx, id, ""); v != nil {
				return v.export(), nil
			}
		}
	}
	return nil, newError(http.StatusNotFound, CodeSchemaNotFound, "Schema %s not found", g)
}

// IDsByGUID is GET /schemas/guids/{guid}/ids: the schema's id in each
// context that has it.
func (r *Registry) IDsByGUID(g string) []ContextID {
	out := []ContextID{}
	sum, ok := parseGUID(g)
	if !ok {
		return out
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, ctx := range r.st.sortedContexts() {
		if sp := r.st.spaces[ctx]; sp != nil {
			if id, ok := sp.byHash[sum]; ok && len(sp.byID[id]) > 0 {
				out = append(out, ContextID{Context: ctx, ID: id})
			}
		}
	}
	return out
}

// ContextID is an id in a context.
type ContextID struct {
	Context string `json:"context"`
	ID      int32  `json:"id"`
}

func parseGUID(g string) ([16]byte, bool) {
	var out [16]byte
	h := strings.ReplaceAll(g, "-", "")
	if len(h) != 32 || (len(g) != 32 && len(g) != 36) {
		return out, false
	}
	b, err := hex.DecodeString(h)
	if err != nil {
		return out, false
	}
	copy(out[:], b)
	return out, true
}
