package schema

import "strings"

// Contexts (Confluent's QualifiedSubject, default tenant only). A subject
// may carry a context: ":.orders:payments-value" is subject
// "payments-value" in context ".orders". Subjects without one are in the
// default context ".". Each context has its own schema ids. ":*:" is the
// wildcard context some listings take, ".__GLOBAL" the context whose config
// and mode apply below every other.
const (
	defaultContext    = "."
	contextDelimiter  = ":"
	contextPrefix     = ":."
	contextWildcard   = ":*:"
	globalContextName = ".__GLOBAL"
	globalSubjectName = "__GLOBAL"
	emptySubjectName  = "__EMPTY"
)

// qualified is a subject split into its context and its name in it.
type qualified struct {
	context string // "." (default), ".name", or "*" (wildcard)
	name    string
}

// parseSubject splits a qualified subject as QualifiedSubject's
// constructor does: ":.ctx:name", ":.ctx" (a context, empty name),
// ":*:name", or a plain name in the default context.
func parseSubject(s string) qualified {
	switch {
	case strings.HasPrefix(s, contextPrefix):
		rest := s[len(contextPrefix):]
		if i := strings.Index(rest, contextDelimiter); i >= 0 {
			i += len(contextPrefix)
			return qualified{context: s[1:i], name: s[i+1:]}
		}
		return qualified{context: s[1:]}
	case strings.HasPrefix(s, contextWildcard):
		return qualified{context: "*", name: s[len(contextWildcard):]}
	}
	return qualified{context: defaultContext, name: s}
}

// qualifiedContext is the context as a subject prefix: "" for the default
// context, ":.ctx:" otherwise.
func (q qualified) qualifiedContext() string {
	if q.context == defaultContext {
		return ""
	}
	return contextDelimiter + q.context + contextDelimiter
}

func (q qualified) String() string { return q.qualifiedContext() + q.name }

// normalizeSubject is QualifiedSubject.normalize: ":.:x" is "x".
func normalizeSubject(s string) string { return parseSubject(s).String() }

// contextOf is the context name of a qualified subject.
func contextOf(subject string) string { return parseSubject(subject).context }

// isDefaultContext reports a subject that names the default context
// itself ("" or ":.:"): the config and mode endpoints treat it as global.
func isDefaultContext(s string) bool {
	q := parseSubject(s)
	return q.context == defaultContext && q.name == ""
}

// isContextSubject reports a subject that names a context (empty name).
func isContextSubject(s string) bool { return parseSubject(s).name == "" }

func isGlobalContext(s string) bool {
	q := parseSubject(s)
	return q.context == globalContextName && q.name == ""
}

// validSubject is QualifiedSubject.isValidSubject: no ISO control
// characters, not the reserved names, a name unless allowEmpty, and the
// global context only for config and mode.
func validSubject(s string, configOrMode, allowEmpty bool) bool {
	for _, r := range s {
		if r <= 0x1f || (r >= 0x7f && r <= 0x9f) {
			return false
		}
	}
	q := parseSubject(s)
	if q.name == globalSubjectName || q.name == emptySubjectName {
		return false
	}
	if !allowEmpty && q.name == "" {
		return false
	}
	if !configOrMode && q.context == globalContextName {
		return false
	}
	return true
}

// qualifyWithParent resolves a reference's subject relative to the
// referring subject: an unqualified reference lives in the referrer's
// context.
func qualifyWithParent(parent, ref string) qualified {
	q := parseSubject(ref)
	if q.context == defaultContext {
		if p := parseSubject(parent); p.context != defaultContext && p.context != "*" {
			q = qualified{context: p.context, name: ref}
		}
	}
	return q
}

// inContext reports whether subject belongs to the context ctx names (a
// qualified subject with an empty name); the global context holds all.
func inContext(subject string, ctx qualified) bool {
	if ctx.name != "" {
		return false
	}
	return ctx.context == globalContextName || ctx.qualifiedContext() == parseSubject(subject).qualifiedContext()
}

// matchesSubject is Confluent's matchingSubjectPredicate: the subject
// itself, or, when subject names a context, every subject in it; no
// subject (the global scope) matches every subject.
func matchesSubject(subject, candidate string) bool {
	return subject == "" || subject == candidate || inContext(candidate, parseSubject(subject))
}
