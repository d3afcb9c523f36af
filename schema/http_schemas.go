package schema

// /schemas (SchemasResource).

import (
	"net/http"
	"strings"
)

func (h *handler) schemaRoutes() {
	h.handle(http.MethodGet, "/schemas", (*call).listSchemas)
	h.handle(http.MethodGet, "/schemas/types", (*call).schemaTypes)
	h.handle(http.MethodGet, "/schemas/ids/{id}", (*call).schemaByID)
	h.handle(http.MethodGet, "/schemas/ids/{id}/schema", (*call).schemaByIDRaw)
	h.handle(http.MethodGet, "/schemas/ids/{id}/subjects", (*call).subjectsForID)
	h.handle(http.MethodGet, "/schemas/ids/{id}/versions", (*call).versionsForID)
	h.handle(http.MethodGet, "/schemas/guids/{guid}", (*call).schemaByGUID)
	h.handle(http.MethodGet, "/schemas/guids/{guid}/ids", (*call).idsByGUID)
}

func (c *call) listSchemas() {
	list := c.h.reg.ListSchemas(c.query.Get("subjectPrefix"), c.boolParam("deleted"), c.boolParam("latestOnly"), c.query.Get("ruleType"))
	out := make([]schemaJSON, 0, len(list))
	for _, v := range list {
		if c.permitted(OpRead, v.Subject) {
			out = append(out, toSchemaJSON(v))
		}
	}
	if p, ok := page(c, out, 1000, 1000); ok {
		c.ok(http.StatusOK, p)
	}
}

func (c *call) schemaTypes() { c.ok(http.StatusOK, c.h.reg.Types()) }

// readableID checks that the principal may read a subject holding the id
// (any of them, deleted versions included).
func (c *call) readableID(id int32, subject string) bool {
	if c.h.opts.Authorizer == nil {
		return true
	}
	versions, e := c.h.reg.VersionsForID(id, subject, true)
	if e != nil {
		c.fail(e)
		return false
	}
	for _, sv := range versions {
		if c.permitted(OpRead, sv.Subject) {
			return true
		}
	}
	c.allow(OpRead, firstSubject(versions))
	return false
}

func firstSubject(vs []SubjectVersion) string {
	if len(vs) == 0 {
		return ""
	}
	return vs[0].Subject
}

// byID serves /schemas/ids/{id} and its raw form.
func (c *call) byID() (*Version, int32, bool) {
	id, ok := c.idParam()
	if !ok {
		return nil, 0, false
	}
	subject := c.query.Get("subject")
	v, maxID, e := c.h.reg.SchemaByID(id, subject)
	if e != nil {
		c.fail(e)
		return nil, 0, false
	}
	if !c.readableID(id, subject) || !c.formatted(v) {
		return nil, 0, false
	}
	c.qualifiedRefs(v)
	return v, maxID, true
}

func (c *call) schemaByID() {
	v, maxID, ok := c.byID()
	if !ok {
		return
	}
	j := schemaStringJSON{GUID: v.GUID, SchemaType: v.Type, Schema: v.Schema, References: v.References,
		Metadata: v.Metadata, RuleSet: v.RuleSet, TS: v.TS, Deleted: v.Deleted}
	if _, given := c.query["subject"]; given {
		j.Subject, j.Version = v.Subject, v.Version
	}
	if c.boolParam("fetchMaxId") {
		j.MaxID = maxID
	}
	c.ok(http.StatusOK, j)
}

// schemaByIDRaw answers 40403 for an unknown id (Confluent fails there
// with a 500 from a null pointer).
func (c *call) schemaByIDRaw() {
	if v, _, ok := c.byID(); ok {
		c.raw(v.Schema)
	}
}

// visibleVersionsForID is the (subject, version) pairs of the id the
// principal may see.
func (c *call) visibleVersionsForID() ([]SubjectVersion, bool) {
	id, ok := c.idParam()
	if !ok {
		return nil, false
	}
	versions, e := c.h.reg.VersionsForID(id, c.query.Get("subject"), c.boolParam("deleted"))
	if e != nil {
		c.fail(e)
		return nil, false
	}
	visible := versions[:0]
	for _, sv := range versions {
		if c.permitted(OpDescribe, sv.Subject) {
			visible = append(visible, sv)
		}
	}
	return visible, true
}

func (c *call) subjectsForID() {
	versions, ok := c.visibleVersionsForID()
	if !ok {
		return
	}
	subjects := []string{}
	for _, sv := range versions {
		if len(subjects) == 0 || subjects[len(subjects)-1] != sv.Subject {
			subjects = append(subjects, sv.Subject)
		}
	}
	if out, ok := page(c, subjects, unlimited, unlimited); ok {
		c.ok(http.StatusOK, out)
	}
}

func (c *call) versionsForID() {
	versions, ok := c.visibleVersionsForID()
	if !ok {
		return
	}
	if out, ok := page(c, versions, unlimited, unlimited); ok {
		c.ok(http.StatusOK, out)
	}
}

func (c *call) schemaByGUID() {
	v, e := c.h.reg.SchemaByGUID(strings.TrimSpace(c.vars["guid"]))
	if e != nil {
		c.fail(e)
		return
	}
	if !c.readableID(v.ID, v.Subject) || !c.formatted(v) {
		return
	}
	c.ok(http.StatusOK, schemaStringJSON{GUID: v.GUID, SchemaType: v.Type, Schema: v.Schema, References: v.References,
		Metadata: v.Metadata, RuleSet: v.RuleSet, TS: v.TS, Deleted: v.Deleted})
}

func (c *call) idsByGUID() {
	ids := c.h.reg.IDsByGUID(strings.TrimSpace(c.vars["guid"]))
	visible := ids[:0]
	for _, id := range ids {
		if c.h.opts.Authorizer == nil {
			visible = append(visible, id)
			continue
		}
		if vs, e := c.h.reg.VersionsForID(id.ID, qualified{context: id.Context}.qualifiedContext(), true); e == nil {
			for _, sv := range vs {
				if c.permitted(OpRead, sv.Subject) {
					visible = append(visible, id)
					break
				}
			}
		}
	}
	c.ok(http.StatusOK, visible)
}
