package schema

import "context"

// Deletes (KafkaSchemaRegistry.deleteSchemaVersion / deleteSubject). A soft
// delete hides a version but keeps its id readable; a permanent one
// (permanent=true, only after a soft delete) removes it with a tombstone.
// Neither is allowed while another schema references the version: soft
// deletes count only referrers that are not deleted themselves, permanent
// ones every referrer.

// DeleteVersion is DELETE /subjects/{s}/versions/{v} (v -1: the latest);
// it returns the version deleted.
func (r *Registry) DeleteVersion(ctx context.Context, subject string, ver int32, permanent bool) (int32, *Error) {
	subject = normalizeSubject(subject)
	if e := r.beginWrite(ctx); e != nil {
		return 0, e
	}
	defer r.endWrite()
	r.mu.RLock()
	target, outs, e := r.planDeleteVersion(subject, ver, permanent)
	r.mu.RUnlock()
	if e != nil {
		return 0, e
	}
	if e := r.write(ctx, outs...); e != nil {
		return 0, e
	}
	return target, nil
}

func (r *Registry) planDeleteVersion(subject string, ver int32, permanent bool) (int32, []out, *Error) {
	var v *version
	if ver == -1 {
		if e := r.st.subjects[subject]; e != nil {
			v = e.latest()
		}
	} else {
		v = r.st.get(subject, ver)
		if v != nil && v.Deleted && !permanent {
			return 0, nil, errVersionSoftDeleted(subject, ver)
		}
	}
	if v == nil {
		if !r.st.hasSubjects(subject, true) {
			return 0, nil, errSubjectNotFound(subject)
		}
		return 0, nil, errVersionNotFound(ver)
	}
	if readOnly(r.modeInScope(subject)) {
		return 0, nil, errNotPermitted("Subject %s in context %s is in read-only mode", subject, parseSubject(subject).qualifiedContext())
	}
	if r.referenced(subject, v.Version, permanent, "") {
		return 0, nil, errReferenceExists(subject, v.Version)
	}
	key := recordKey{Type: keySchema, Subject: subject, Version: v.Version}
	if !permanent {
		sv := v.schemaValue
		sv.Deleted = true
		sv.MD5 = ""
		return v.Version, []out{{key, &sv}}, nil
	}
	if !v.Deleted {
		return 0, nil, errVersionNotSoftDeleted(subject, v.Version)
	}
	outs := []out{{key, nil}}
	if len(r.st.subjects[subject].versions) == 1 {
		// The subject's last version: its own mode and config go too.
		outs = append(outs, r.dropSubjectSettings(subject)...)
	}
	return v.Version, append(outs, r.maxIDsRecord()), nil
}

// DeleteSubject is DELETE /subjects/{s}; it returns the versions deleted.
func (r *Registry) DeleteSubject(ctx context.Context, subject string, permanent bool) ([]int32, *Error) {
	subject = normalizeSubject(subject)
	if e := r.beginWrite(ctx); e != nil {
		return nil, e
	}
	defer r.endWrite()
	r.mu.RLock()
	deleted, outs, e := r.planDeleteSubject(subject, permanent)
	r.mu.RUnlock()
	if e != nil {
		return nil, e
	}
	if e := r.write(ctx, outs...); e != nil {
		return nil, e
	}
	return deleted, nil
}

func (r *Registry) planDeleteSubject(subject string, permanent bool) ([]int32, []out, *Error) {
	if !r.st.hasSubjects(subject, true) {
		return nil, nil, errSubjectNotFound(subject)
	}
	if !permanent && !r.st.hasSubjects(subject, false) {
		return nil, nil, errSubjectSoftDeleted(subject)
	}
	if readOnly(r.modeInScope(subject)) {
		return nil, nil, errNotPermitted("Subject %s in context %s is in read-only mode", subject, parseSubject(subject).qualifiedContext())
	}
	deleted := []int32{}
	last := int32(0)
	if e := r.st.subjects[subject]; e != nil {
		for _, v := range e.versions {
			if v.Deleted && !permanent {
				continue
			}
			last = v.Version
			// References from the subject's own versions do not count.
			if r.referenced(subject, v.Version, permanent, subject) {
				return nil, nil, errReferenceExists(subject, v.Version)
			}
			if permanent && !v.Deleted {
				return nil, nil, errSubjectNotSoftDeleted(subject)
			}
			deleted = append(deleted, v.Version)
		}
	}
	if !permanent {
		return deleted, []out{{recordKey{Type: keyDeleteSubject, Subject: subject},
			deleteSubjectValue{Subject: subject, Version: last}}}, nil
	}
	var outs []out
	// Newest first: a version may reference an older one of the subject.
	for i := len(deleted) - 1; i >= 0; i-- {
		outs = append(outs, out{recordKey{Type: keySchema, Subject: subject, Version: deleted[i]}, nil})
	}
	outs = append(outs, r.dropSubjectSettings(subject)...)
	return deleted, append(outs, r.maxIDsRecord()), nil
}

// referenced reports a referrer of (subject, version): with deleted, any;
// else only referrers with a version that is not deleted. Referrers in
// subject except are ignored.
func (r *Registry) referenced(subject string, ver int32, deleted bool, except string) bool {
	for id := range r.st.referencedBy(subject, ver) {
		sp := r.st.spaces[id.context]
		if sp == nil {
			continue
		}
		for _, h := range sp.byID[id.id] {
			if h.subject == except {
				continue
			}
			if got := r.st.get(h.subject, h.version); got != nil && (deleted || !got.Deleted) {
				return true
			}
		}
	}
	return false
}

func (r *Registry) dropSubjectSettings(subject string) []out {
	var outs []out
	if _, ok := r.st.modes[subject]; ok {
		outs = append(outs, out{recordKey{Type: keyMode, Subject: subject}, nil})
	}
	if _, ok := r.st.configs[subject]; ok {
		outs = append(outs, out{recordKey{Type: keyConfig, Subject: subject}, nil})
	}
	return outs
}

// maxIDsRecord keeps every context's highest id in the topic once a hard
// delete may let compaction drop the record that held it (codec.go).
func (r *Registry) maxIDsRecord() out {
	return out{recordKey{Type: keyNoop}, noopValue{MaxIDs: r.st.maxIDs()}}
}
