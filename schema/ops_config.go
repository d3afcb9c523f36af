package schema

import (
	"context"
	"strings"
)

// Config is a compatibility config as the REST API shows and takes it
// (Config / ConfigUpdateRequest). Nil fields are absent.
type Config = configValue

// ConfigUpdate is a PUT /config body: a field present replaces the
// stored one, a field sent as null clears it (Set* true, value nil), an
// absent field keeps it.
type ConfigUpdate struct {
	Alias, AliasForDeks                           *string
	Normalize, ValidateFields, ValidateNewSchemas *bool
	ValidateRules                                 *bool
	CompatibilityLevel                            *string
	CompatibilityPolicy, CompatibilityGroup       *string
	DefaultMetadata, OverrideMetadata             *Metadata
	DefaultRuleSet, OverrideRuleSet               *RuleSet
	SetAlias, SetAliasForDeks, SetNormalize       bool
	SetValidateFields, SetValidateNewSchemas      bool
	SetValidateRules, SetCompatibilityLevel       bool
	SetCompatibilityPolicy, SetCompatibilityGroup bool
	SetDefaultMetadata, SetOverrideMetadata       bool
	SetDefaultRuleSet, SetOverrideRuleSet         bool
}

func (c *configValue) hasDefaultsOrOverrides() bool {
	return c.DefaultMetadata != nil || c.OverrideMetadata != nil || c.DefaultRuleSet != nil || c.OverrideRuleSet != nil
}

func (r *Registry) defaultConfig() *configValue {
	l := r.opts.DefaultCompatibility
	return &configValue{CompatibilityLevel: &l}
}

// withLevel is populateCompatibilityLevel: a stored config without a level
// shows the server's default level.
func (r *Registry) withLevel(v *configValue) *configValue {
	if v.CompatibilityLevel != nil {
		return v
	}
	c := *v
	l := r.opts.DefaultCompatibility
	c.CompatibilityLevel = &l
	return &c
}

// configFor is InMemoryCache.config: the subject's own config; inScope
// falls back to its context's, then the global one, then the ".__GLOBAL"
// context's, then the default. Without inScope only the global config
// (subject "") defaults. The caller holds mu.
func (r *Registry) configFor(subject string, inScope bool) *configValue {
	if v := r.st.configs[subject]; v != nil {
		return r.withLevel(v)
	}
	q := parseSubject(subject)
	if !inScope {
		if subject == "" || q.context == globalContextName {
			return r.defaultConfig()
		}
		return nil
	}
	key := ""
	if q.context != defaultContext {
		key = q.qualifiedContext()
	}
	if v := r.st.configs[key]; v != nil {
		return r.withLevel(v)
	}
	if v := r.st.configs[contextDelimiter+globalContextName+contextDelimiter]; v != nil {
		return r.withLevel(v)
	}
	return r.defaultConfig()
}

func (r *Registry) configInScope(subject string) *configValue { return r.configFor(subject, true) }

// modeFor is InMemoryCache.mode, as configFor.
func (r *Registry) modeFor(subject string, inScope bool) string {
	if m, ok := r.st.modes[subject]; ok {
		return m
	}
	q := parseSubject(subject)
	if !inScope {
		if subject == "" || q.context == globalContextName {
			return modeReadWrite
		}
		return ""
	}
	key := ""
	if q.context != defaultContext {
		key = q.qualifiedContext()
	}
	if m, ok := r.st.modes[key]; ok {
		return m
	}
	if m, ok := r.st.modes[contextDelimiter+globalContextName+contextDelimiter]; ok {
		return m
	}
	return modeReadWrite
}

func (r *Registry) modeInScope(subject string) string { return r.modeFor(subject, true) }

// scopeSubject maps the config and mode endpoints' subject: the default
// context itself is the global config ("").
func scopeSubject(subject string) string {
	if isDefaultContext(subject) {
		return ""
	}
	return normalizeSubject(subject)
}

// GetConfig is GET /config[/{subject}].
func (r *Registry) GetConfig(subject string, defaultToGlobal bool) (*Config, *Error) {
	s := scopeSubject(subject)
	r.mu.RLock()
	defer r.mu.RUnlock()
	c := r.configFor(s, defaultToGlobal)
	if c == nil {
		return nil, errSubjectConfigNotConfigured(s)
	}
	out := *c
	out.Subject = ""
	return &out, nil
}

// UpdateConfig is PUT /config[/{subject}]; it returns the stored config.
func (r *Registry) UpdateConfig(ctx context.Context, subject string, u *ConfigUpdate) (*Config, *Error) {
	if u.SetCompatibilityLevel && u.CompatibilityLevel != nil {
		l, ok := parseLevel(*u.CompatibilityLevel)
		if !ok {
			return nil, errInvalidCompatibility()
		}
		u.CompatibilityLevel = &l
	}
	for _, rs := range []*RuleSet{u.DefaultRuleSet, u.OverrideRuleSet} {
		if err := rs.validate(); err != nil {
			return nil, errInvalidRuleSet(err.Error())
		}
	}
	s := ""
	if !isDefaultContext(subject) {
		if !validSubject(subject, true, true) {
			return nil, errInvalidSubject(subject)
		}
		s = normalizeSubject(subject)
	}
	if e := r.beginWrite(ctx); e != nil {
		return nil, e
	}
	defer r.endWrite()
	r.mu.RLock()
	if readOnly(r.modeInScope(s)) {
		r.mu.RUnlock()
		return nil, errNotPermitted("Subject %s in context %s is in read-only mode", s, parseSubject(s).qualifiedContext())
	}
	next := &configValue{}
	if old := r.st.configs[s]; old != nil {
		*next = *old
	}
	r.mu.RUnlock()
	next.Subject = s
	u.apply(next)
	if e := r.write(ctx, out{recordKey{Type: keyConfig, Subject: s}, next}); e != nil {
		return nil, e
	}
	res := *next
	res.Subject = ""
	return &res, nil
}

func (u *ConfigUpdate) apply(c *configValue) {
	set := func(ok bool, dst **string, v *string) {
		if ok {
			*dst = v
		}
	}
	setb := func(ok bool, dst **bool, v *bool) {
		if ok {
			*dst = v
		}
	}
	set(u.SetAlias, &c.Alias, u.Alias)
	set(u.SetAliasForDeks, &c.AliasForDeks, u.AliasForDeks)
	setb(u.SetNormalize, &c.Normalize, u.Normalize)
	setb(u.SetValidateFields, &c.ValidateFields, u.ValidateFields)
	setb(u.SetValidateNewSchemas, &c.ValidateNewSchemas, u.ValidateNewSchemas)
	setb(u.SetValidateRules, &c.ValidateRules, u.ValidateRules)
	set(u.SetCompatibilityLevel, &c.CompatibilityLevel, u.CompatibilityLevel)
	set(u.SetCompatibilityPolicy, &c.CompatibilityPolicy, u.CompatibilityPolicy)
	set(u.SetCompatibilityGroup, &c.CompatibilityGroup, u.CompatibilityGroup)
	if u.SetDefaultMetadata {
		c.DefaultMetadata = u.DefaultMetadata
	}
	if u.SetOverrideMetadata {
		c.OverrideMetadata = u.OverrideMetadata
	}
	if u.SetDefaultRuleSet {
		c.DefaultRuleSet = u.DefaultRuleSet
	}
	if u.SetOverrideRuleSet {
		c.OverrideRuleSet = u.OverrideRuleSet
	}
}

// DeleteConfig is DELETE /config[/{subject}]; it returns what was there.
func (r *Registry) DeleteConfig(ctx context.Context, subject string) (*Config, *Error) {
	s := scopeSubject(subject)
	if e := r.beginWrite(ctx); e != nil {
		return nil, e
	}
	defer r.endWrite()
	r.mu.RLock()
	old := r.configFor(s, false)
	ro := readOnly(r.modeInScope(s))
	r.mu.RUnlock()
	if old == nil {
		return nil, errSubjectNotFound(s)
	}
	if ro {
		return nil, errNotPermitted("Subject %s in context %s is in read-only mode", s, parseSubject(s).qualifiedContext())
	}
	if e := r.write(ctx, out{recordKey{Type: keyConfig, Subject: s}, nil}); e != nil {
		return nil, e
	}
	res := *old
	res.Subject = ""
	return &res, nil
}

// GetMode is GET /mode[/{subject}].
func (r *Registry) GetMode(subject string, defaultToGlobal bool) (string, *Error) {
	s := scopeSubject(subject)
	r.mu.RLock()
	defer r.mu.RUnlock()
	m := r.modeFor(s, defaultToGlobal)
	if m == "" {
		return "", errSubjectModeNotConfigured(s)
	}
	return m, nil
}

// SetMode is PUT /mode[/{subject}]; a nil mode (sent as null) removes the
// subject's mode. Switching to IMPORT needs the subjects to have no
// versions, or force; their deleted versions are then hard-deleted.
func (r *Registry) SetMode(ctx context.Context, subject string, modePtr *string, force bool) *Error {
	if subject != "" && !validSubject(subject, true, true) {
		return errInvalidSubject(subject)
	}
	s := scopeSubject(subject)
	mode := ""
	if modePtr != nil {
		mode = *modePtr
		if !contains(modes, strings.ToUpper(mode)) {
			return errInvalidMode("")
		}
	}
	upper := strings.ToUpper(mode)
	if mode == modeForward && !isGlobalContext(s) {
		return errInvalidMode("Forward mode only supported on global level")
	}
	if e := r.beginWrite(ctx); e != nil {
		return e
	}
	defer r.endWrite()
	var outs []out
	r.mu.RLock()
	if upper == modeImport && r.modeInScope(s) != modeImport && !force {
		if r.st.hasSubjects(s, false) {
			r.mu.RUnlock()
			return errNotPermitted("Cannot import since found existing subjects")
		}
		for _, name := range r.st.subjectsMatching(s, true) {
			for _, v := range r.st.subjects[name].versions {
				if len(r.st.referencedBy(name, v.Version)) > 0 {
					r.mu.RUnlock()
					return errReferenceExists(name, v.Version)
				}
				outs = append(outs, out{recordKey{Type: keySchema, Subject: name, Version: v.Version}, nil})
			}
		}
		outs = append(outs, out{recordKey{Type: keyClearSubject, Subject: s}, clearSubjectValue{Subject: s}})
	}
	r.mu.RUnlock()
	var value any
	if modePtr != nil {
		value = modeValue{Subject: s, Mode: upper}
	}
	outs = append(outs, out{recordKey{Type: keyMode, Subject: s}, value})
	return r.write(ctx, outs...)
}

// DeleteMode is DELETE /mode[/{subject}] (with recursive: every subject
// mode in the context too); it returns the mode there was.
func (r *Registry) DeleteMode(ctx context.Context, subject string, recursive bool) (string, *Error) {
	s := scopeSubject(subject)
	if e := r.beginWrite(ctx); e != nil {
		return "", e
	}
	defer r.endWrite()
	r.mu.RLock()
	old := r.modeFor(s, false)
	outs := []out{{recordKey{Type: keyMode, Subject: s}, nil}}
	if recursive && isContextSubject(s) {
		ctx := parseSubject(s).context
		for name := range r.st.modes {
			if q := parseSubject(name); name != s && q.name != "" && q.context == ctx {
				outs = append(outs, out{recordKey{Type: keyMode, Subject: name}, nil})
			}
		}
	}
	r.mu.RUnlock()
	if old == "" && !recursive {
		return "", errSubjectNotFound(s)
	}
	if e := r.write(ctx, outs...); e != nil {
		return "", e
	}
	return old, nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
