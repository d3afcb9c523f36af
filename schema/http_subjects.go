package schema

// /subjects (SubjectsResource, SubjectVersionsResource).

import (
	"net/http"
)

func (h *handler) subjectRoutes() {
	h.handle(http.MethodGet, "/subjects", (*call).listSubjects)
	h.handle(http.MethodPost, "/subjects/{subject}", (*call).lookup)
	h.handle(http.MethodDelete, "/subjects/{subject}", (*call).deleteSubject)
	h.handle(http.MethodGet, "/subjects/{subject}/metadata", (*call).latestWithMetadata)
	h.handle(http.MethodGet, "/subjects/{subject}/versions", (*call).listVersions)
	h.handle(http.MethodPost, "/subjects/{subject}/versions", (*call).register)
	h.handle(http.MethodGet, "/subjects/{subject}/versions/{version}", (*call).getVersion)
	h.handle(http.MethodDelete, "/subjects/{subject}/versions/{version}", (*call).deleteVersion)
	h.handle(http.MethodGet, "/subjects/{subject}/versions/{version}/schema", (*call).getVersionSchema)
	h.handle(http.MethodGet, "/subjects/{subject}/versions/{version}/referencedby", (*call).referencedBy)
}

// listFilter is the deleted / deletedOnly pair: deletedOnly wins.
func (c *call) listFilter() Filter {
	switch {
	case c.boolParam("deletedOnly"):
		return FilterDeletedOnly
	case c.boolParam("deleted"):
		return FilterIncludeDeleted
	}
	return FilterDefault
}

func (c *call) listSubjects() {
	prefix := contextWildcard
	if p, ok := c.query["subjectPrefix"]; ok {
		prefix = p[0]
	}
	all := c.h.reg.ListSubjects(prefix, c.listFilter())
	visible := all[:0]
	for _, s := range all {
		if c.permitted(OpDescribe, s) {
			visible = append(visible, s)
		}
	}
	if out, ok := page(c, visible, unlimited, unlimited); ok {
		c.ok(http.StatusOK, out)
	}
}

// schemaRequest reads a RegisterSchemaRequest body.
func (c *call) schemaRequest() (*SchemaRequest, bool) {
	var j schemaRequestJSON
	if !c.body(&j) {
		return nil, false
	}
	q, e := j.request()
	if e != nil {
		c.fail(e)
		return nil, false
	}
	return q, true
}

// formatted renders v's schema in the format parameter.
func (c *call) formatted(v *Version) bool {
	f := c.query.Get("format")
	if f == "" {
		return true
	}
	s, e := c.h.reg.Format(v, f)
	if e != nil {
		c.fail(e)
		return false
	}
	v.Schema = s
	return true
}

// qualifiedRefs is referenceFormat=qualified: a context-qualified
// subject's references shown qualified with its context.
func (c *call) qualifiedRefs(v *Version) {
	if c.query.Get("referenceFormat") != "qualified" || parseSubject(v.Subject).context == defaultContext {
		return
	}
	for i, r := range v.References {
		v.References[i].Subject = qualifyWithParent(v.Subject, r.Subject).String()
	}
}

func (c *call) lookup() {
	subject, ok := c.subjectFor(OpRead)
	if !ok {
		return
	}
	q, ok := c.schemaRequest()
	if !ok {
		return
	}
	c.schemaAnswer(c.h.reg.Lookup(subject, q, c.boolParam("normalize"), c.boolParam("deleted")))
}

func (c *call) deleteSubject() {
	subject, ok := c.subjectFor(OpDelete)
	if !ok {
		return
	}
	versions, e := c.h.reg.DeleteSubject(c.ctx(), subject, c.boolParam("permanent"))
	if e != nil {
		c.fail(e)
		return
	}
	c.ok(http.StatusOK, versions)
}

func (c *call) latestWithMetadata() {
	subject, ok := c.subjectFor(OpRead)
	if !ok {
		return
	}
	keys, values := c.query["key"], c.query["value"]
	want := map[string]string{}
	for i := 0; i < len(keys) && i < len(values); i++ {
		want[keys[i]] = values[i]
	}
	c.schemaAnswer(c.h.reg.LatestWithMetadata(subject, want, c.boolParam("deleted")))
}

func (c *call) listVersions() {
	subject, ok := c.subjectFor(OpRead)
	if !ok {
		return
	}
	f := c.listFilter()
	if c.boolParam("deletedAsNegative") {
		f = FilterDeletedAsNegative
	}
	versions, e := c.h.reg.ListVersions(subject, f)
	if e != nil {
		c.fail(e)
		return
	}
	if out, ok := page(c, versions, unlimited, unlimited); ok {
		c.ok(http.StatusOK, out)
	}
}

func (c *call) register() {
	subject, ok := c.subjectFor(OpWrite)
	if !ok {
		return
	}
	q, ok := c.schemaRequest()
	if !ok {
		return
	}
	v, e := c.h.reg.Register(c.ctx(), subject, q, c.boolParam("normalize"))
	if e != nil {
		c.fail(e)
		return
	}
	if !c.formatted(v) {
		return
	}
	c.ok(http.StatusOK, registerJSON{ID: v.ID, Version: v.Version, GUID: v.GUID, SchemaType: v.Type,
		References: v.References, Metadata: v.Metadata, RuleSet: v.RuleSet, Schema: v.Schema})
}

// subjectFor reads the subject of a subject endpoint and checks op on it.
func (c *call) subjectFor(op Operation) (string, bool) {
	s := c.vars["subject"]
	return s, c.allow(op, normalizeSubject(s))
}

// versionOf reads the subject and version of a version endpoint and
// checks op on the subject.
func (c *call) versionOf(op Operation) (string, int32, bool) {
	subject, ok := c.subjectFor(op)
	if !ok {
		return "", 0, false
	}
	v, ok := c.versionParam()
	return subject, v, ok
}

// schemaAnswer answers a version found (in the format asked for), or the
// error.
func (c *call) schemaAnswer(v *Version, e *Error) {
	if e != nil {
		c.fail(e)
		return
	}
	if c.formatted(v) {
		c.ok(http.StatusOK, toSchemaJSON(v))
	}
}

// version reads the version a version endpoint names, in the format
// asked for; false has answered.
func (c *call) version() (*Version, bool) {
	subject, ver, ok := c.versionOf(OpRead)
	if !ok {
		return nil, false
	}
	v, e := c.h.reg.GetVersion(subject, ver, c.boolParam("deleted"))
	if e != nil {
		c.fail(e)
		return nil, false
	}
	return v, c.formatted(v)
}

func (c *call) getVersion() {
	if v, ok := c.version(); ok {
		c.qualifiedRefs(v)
		c.ok(http.StatusOK, toSchemaJSON(v))
	}
}

func (c *call) getVersionSchema() {
	if v, ok := c.version(); ok {
		c.raw(v.Schema)
	}
}

func (c *call) deleteVersion() {
	subject, ver, ok := c.versionOf(OpDelete)
	if !ok {
		return
	}
	deleted, e := c.h.reg.DeleteVersion(c.ctx(), subject, ver, c.boolParam("permanent"))
	if e != nil {
		c.fail(e)
		return
	}
	c.ok(http.StatusOK, deleted)
}

func (c *call) referencedBy() {
	subject, ver, ok := c.versionOf(OpRead)
	if !ok {
		return
	}
	ids, e := c.h.reg.ReferencedBy(subject, ver, c.boolParam("deleted"))
	if e != nil {
		c.fail(e)
		return
	}
	if out, ok := page(c, ids, 1000, 1000); ok {
		c.ok(http.StatusOK, out)
	}
}
