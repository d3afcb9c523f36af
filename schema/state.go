package schema

// The registry's state: what the _schemas records say, applied in offset
// order. It is Confluent's lookup cache (InMemoryCache plus the id
// generator's maxima): no I/O, no clock, deterministic, so replaying the
// topic on start rebuilds exactly what the writer saw. Callers hold
// Registry.mu.

import (
	"fmt"
	"slices"
	"sort"
)

// version is one registered (subject, version).
type version struct {
	schemaValue
	sum [16]byte // Confluent's MD5 of the schema (its guid)
	ts  int64    // the record's timestamp (the REST "ts")
}

// internType returns the schema type constants, so versions do not hold
// a copy each.
func internType(t string) string {
	for _, known := range [...]string{"AVRO", "JSON", "PROTOBUF"} {
		if t == known {
			return known
		}
	}
	return t
}

// subjectEntry is a subject's versions, ascending.
type subjectEntry struct {
	versions []*version
}

func (e *subjectEntry) find(v int32) (int, bool) {
	return sort.Find(len(e.versions), func(i int) int { return int(v) - int(e.versions[i].Version) })
}

// latest is the highest version not deleted, or nil.
func (e *subjectEntry) latest() *version {
	for i := len(e.versions) - 1; i >= 0; i-- {
		if !e.versions[i].Deleted {
			return e.versions[i]
		}
	}
	return nil
}

// idSpace is one context's schema ids (Confluent's guidToSubjectVersions,
// hashToGuid and the incremental id generator's maximum).
type idSpace struct {
	byID   map[int32]holders // id -> the (subject, version) pairs with it
	byHash map[[16]byte]int32
	maxID  int32
}

// refTarget is a referenced (subject, version); ctxID a referrer.
type refTarget struct {
	subject string
	version int32
}

type ctxID struct {
	context string
	id      int32
}

type state struct {
	subjects map[string]*subjectEntry
	configs  map[string]*configValue // "" = the global config
	modes    map[string]string       // "" = the global mode
	contexts map[string]bool         // contexts with a CONTEXT record (not ".")
	spaces   map[string]*idSpace     // by context
	refBy    map[refTarget]map[ctxID]struct{}
	// applied counts records applied and skipped (metrics, tests).
	applied, skipped int64
}

func newState() *state {
	return &state{
		subjects: map[string]*subjectEntry{},
		configs:  map[string]*configValue{},
		modes:    map[string]string{},
		contexts: map[string]bool{},
		spaces:   map[string]*idSpace{},
		refBy:    map[refTarget]map[ctxID]struct{}{},
	}
}

func (s *state) space(ctx string) *idSpace {
	sp := s.spaces[ctx]
	if sp == nil {
		sp = &idSpace{byID: map[int32]holders{}, byHash: map[[16]byte]int32{}}
		s.spaces[ctx] = sp
	}
	return sp
}

// apply applies one record. A record that does not decode, or that
// Confluent's reader would refuse (a schema id already taken by another
// schema), changes nothing and is reported as an error to log.
func (s *state) apply(key, value []byte, offset, ts int64) error {
	k, err := decodeKey(key)
	if err != nil {
		s.skipped++
		return err
	}
	if err := s.applyKey(k, value, offset, ts); err != nil {
		s.skipped++
		return err
	}
	s.applied++
	return nil
}

func (s *state) applyKey(k recordKey, value []byte, offset, ts int64) error {
	switch k.Type {
	case keySchema:
		if value == nil {
			s.tombstone(k.Subject, k.Version)
			return nil
		}
		v, err := decodeSchemaValue(value)
		if err != nil {
			return err
		}
		// The key names the version; a value disagreeing with it is taken
		// at the key's word, as Confluent's cache is keyed by it.
		v.Subject, v.Version = k.Subject, k.Version
		sum := v.hash()
		v.MD5 = "" // kept as sum; Confluent rewrites a value without it too
		v.SchemaType = internType(v.SchemaType)
		if e := s.subjects[k.Subject]; e != nil && len(e.versions) > 0 {
			v.Subject = e.versions[0].Subject // one copy of the name a subject
		}
		return s.putSchema(&version{schemaValue: *v, sum: sum, ts: ts})
	case keyConfig:
		if value == nil {
			delete(s.configs, k.Subject)
			return nil
		}
		v, err := decodeConfigValue(value)
		if err != nil {
			return err
		}
		if v.Subject == "" {
			v.Subject = k.Subject // legacy values without a subject
		}
		s.configs[k.Subject] = v
	case keyMode:
		if value == nil {
			delete(s.modes, k.Subject)
			return nil
		}
		v, err := decodeModeValue(value)
		if err != nil {
			return err
		}
		s.modes[k.Subject] = v.Mode
	case keyDeleteSubject:
		if value == nil {
			return nil
		}
		var v deleteSubjectValue
		if err := decodeInto(value, &v, "delete subject"); err != nil {
			return err
		}
		if v.Subject == "" {
			v.Subject = k.Subject
		}
		if e := s.subjects[v.Subject]; e != nil {
			for _, ver := range e.versions {
				if ver.Version <= v.Version {
					ver.Deleted = true
				}
			}
		}
	case keyClearSubject:
		if value == nil {
			return nil
		}
		var v clearSubjectValue
		if err := decodeInto(value, &v, "clear subject"); err != nil {
			return err
		}
		if v.Subject == "" {
			v.Subject = k.Subject
		}
		s.clearSubjects(v.Subject)
	case keyContext:
		if k.Tenant != "" && k.Tenant != defaultTenant {
			return fmt.Errorf("context %q of tenant %q: sharq serves the default tenant only", k.Context, k.Tenant)
		}
		if value == nil {
			delete(s.contexts, k.Context)
		} else {
			s.contexts[k.Context] = true
		}
	case keyNoop:
		if value == nil {
			return nil
		}
		var v noopValue
		if err := decodeInto(value, &v, "noop"); err != nil {
			return err
		}
		for ctx, id := range v.MaxIDs {
			sp := s.space(ctx)
			sp.maxID = max(sp.maxID, id)
		}
	}
	return nil
}

// putSchema is KafkaStoreMessageHandler's validateUpdate and handleUpdate
// for a SCHEMA value.
func (s *state) putSchema(v *version) error {
	ctx := contextOf(v.Subject)
	sp := s.space(ctx)
	if other := s.keyByID(ctx, v.ID, ""); other != nil && other.Schema != v.Schema {
		return fmt.Errorf("found a schema with duplicate id %d: not registered, since %s version %d already has this id", v.ID, other.Subject, other.Version)
	}
	e := s.subjects[v.Subject]
	if e == nil {
		e = &subjectEntry{}
		s.subjects[v.Subject] = e
	}
	if i, ok := e.find(v.Version); ok {
		old := e.versions[i]
		if old.ID != v.ID {
			s.unindex(old)
		}
		e.versions[i] = v
	} else {
		e.versions = slices.Insert(e.versions, i, v)
	}
	sp.maxID = max(sp.maxID, v.ID)
	hs := sp.byID[v.ID]
	hs.set(v.Subject, v.Version)
	sp.byID[v.ID] = hs
	sp.byHash[v.sum] = v.ID
	// Soft-deleted referrers are indexed too: a reference from a deleted
	// version still blocks a hard delete of what it references (Confluent
	// keeps the index entry from the registration; a compacted topic may
	// hold only the deleted value, so it is added here either way).
	for _, r := range v.References {
		t := refTarget{qualifyWithParent(v.Subject, r.Subject).String(), int32(r.Version)}
		ids := s.refBy[t]
		if ids == nil {
			ids = map[ctxID]struct{}{}
			s.refBy[t] = ids
		}
		ids[ctxID{ctx, v.ID}] = struct{}{}
	}
	return nil
}

// tombstone is a hard delete of one version (schemaTombstoned).
func (s *state) tombstone(subject string, ver int32) {
	e := s.subjects[subject]
	if e == nil {
		return
	}
	i, ok := e.find(ver)
	if !ok {
		return
	}
	old := e.versions[i]
	e.versions = slices.Delete(e.versions, i, i+1)
	if len(e.versions) == 0 {
		delete(s.subjects, subject)
	}
	s.unindex(old)
}

// unindex drops a version from its id's subjects and its references.
func (s *state) unindex(old *version) {
	ctx := contextOf(old.Subject)
	sp := s.space(ctx)
	if hs, ok := sp.byID[old.ID]; ok {
		hs.del(old.Subject, old.Version)
		if len(hs) > 0 {
			// The same schema (same id, same references) is still
			// registered elsewhere in the context: its references stand.
			sp.byID[old.ID] = hs
			return
		}
		delete(sp.byID, old.ID)
	}
	for _, r := range old.References {
		t := refTarget{qualifyWithParent(old.Subject, r.Subject).String(), int32(r.Version)}
		if ids := s.refBy[t]; ids != nil {
			delete(ids, ctxID{ctx, old.ID})
			if len(ids) == 0 {
				delete(s.refBy, t)
			}
		}
	}
}

// clearSubjects forgets the deleted versions of the subjects subject
// matches (a subject, or every subject of a context): what an IMPORT mode
// change leaves after hard-deleting them.
func (s *state) clearSubjects(subject string) {
	for name, e := range s.subjects {
		if !matchesSubject(subject, name) {
			continue
		}
		kept := e.versions[:0]
		for _, v := range e.versions {
			if v.Deleted {
				s.unindex(v)
				continue
			}
			kept = append(kept, v)
		}
		e.versions = kept
		if len(kept) == 0 {
			delete(s.subjects, name)
		}
	}
}

// get returns a subject's version (deleted ones too), or nil.
func (s *state) get(subject string, ver int32) *version {
	e := s.subjects[subject]
	if e == nil {
		return nil
	}
	if i, ok := e.find(ver); ok {
		return e.versions[i]
	}
	return nil
}

// keyByID is LookupCache.schemaKeyById: the version holding id in ctx,
// under subject when one is given. With none, the lowest subject holding
// it (Confluent takes any; sharq picks one deterministically).
func (s *state) keyByID(ctx string, id int32, subject string) *version {
	sp := s.spaces[ctx]
	if sp == nil {
		return nil
	}
	hs := sp.byID[id]
	if len(hs) == 0 {
		return nil
	}
	if subject != "" {
		v, ok := hs.get(subject)
		if !ok {
			return nil
		}
		return s.get(subject, v)
	}
	best := hs[0]
	for _, h := range hs[1:] {
		if h.subject < best.subject {
			best = h
		}
	}
	return s.get(best.subject, best.version)
}

// idAndSubjects is LookupCache.schemaIdAndSubjects: the id a schema hash
// has in ctx and the subjects that hold it, or ok false.
func (s *state) idAndSubjects(ctx string, sum [16]byte) (int32, holders, bool) {
	sp := s.spaces[ctx]
	if sp == nil {
		return 0, nil, false
	}
	id, ok := sp.byHash[sum]
	if !ok {
		return 0, nil, false
	}
	hs := sp.byID[id]
	if len(hs) == 0 {
		return 0, nil, false
	}
	return id, hs, true
}

// hasSubjects reports a subject (or a context's subject) with a version,
// not deleted unless deleted is set.
func (s *state) hasSubjects(subject string, deleted bool) bool {
	for name, e := range s.subjects {
		if !matchesSubject(subject, name) {
			continue
		}
		for _, v := range e.versions {
			if deleted || !v.Deleted {
				return true
			}
		}
	}
	return false
}

// subjectsMatching lists (unsorted) the subjects matching subject that
// have versions (deleted ones when deleted is set).
func (s *state) subjectsMatching(subject string, deleted bool) []string {
	var out []string
	for name, e := range s.subjects {
		if !matchesSubject(subject, name) {
			continue
		}
		for _, v := range e.versions {
			if deleted || !v.Deleted {
				out = append(out, name)
				break
			}
		}
	}
	return out
}

// referencedBy is the set of referrers of a version.
func (s *state) referencedBy(subject string, ver int32) map[ctxID]struct{} {
	return s.refBy[refTarget{subject, ver}]
}

// maxIDs is every context's highest id (the NOOP record's value).
func (s *state) maxIDs() map[string]int32 {
	out := make(map[string]int32, len(s.spaces))
	for ctx, sp := range s.spaces {
		if sp.maxID > 0 {
			out[ctx] = sp.maxID
		}
	}
	return out
}

// sortedContexts is ".", then every context with a CONTEXT record, sorted.
func (s *state) sortedContexts() []string {
	out := make([]string, 0, len(s.contexts)+1)
	for c := range s.contexts {
		out = append(out, c)
	}
	sort.Strings(out)
	return append([]string{defaultContext}, out...)
}

// holders are the (subject, version) pairs holding one id in a context:
// nearly always one, so a slice, not a map.
type holders []holder

type holder struct {
	subject string
	version int32
}

func (hs holders) get(subject string) (int32, bool) {
	for _, h := range hs {
		if h.subject == subject {
			return h.version, true
		}
	}
	return 0, false
}

func (hs *holders) set(subject string, version int32) {
	for i := range *hs {
		if (*hs)[i].subject == subject {
			(*hs)[i].version = version
			return
		}
	}
	*hs = append(*hs, holder{subject, version})
}

// del drops subject when it holds the id at version.
func (hs *holders) del(subject string, version int32) {
	for i, h := range *hs {
		if h.subject == subject && h.version == version {
			*hs = slices.Delete(*hs, i, i+1)
			return
		}
	}
}
