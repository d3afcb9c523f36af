package schema

// /compatibility (CompatibilityResource).

import "net/http"

func (h *handler) compatibilityRoutes() {
	h.handle(http.MethodPost, "/compatibility/subjects/{subject}/versions", func(c *call) { c.compatibility(true) })
	h.handle(http.MethodPost, "/compatibility/subjects/{subject}/versions/{version}", func(c *call) { c.compatibility(false) })
}

// compatibility tests the posted schema against one version or, with all,
// the subject's versions as its level says.
func (c *call) compatibility(all bool) {
	subject := c.vars["subject"]
	if !c.allow(OpRead, normalizeSubject(subject)) {
		return
	}
	ver := int32(-1)
	if !all {
		v, ok := c.versionParam()
		if !ok {
			return
		}
		ver = v
	}
	q, ok := c.schemaRequest()
	if !ok {
		return
	}
	verbose := c.boolParam("verbose")
	msgs, e := c.h.reg.CheckCompatibility(subject, ver, all, q, c.boolParam("normalize"), verbose)
	if e != nil {
		c.fail(e)
		return
	}
	if verbose {
		if msgs == nil {
			msgs = []string{}
		}
		c.ok(http.StatusOK, verboseCompatibilityJSON{IsCompatible: len(msgs) == 0, Messages: msgs})
		return
	}
	c.ok(http.StatusOK, compatibilityJSON{IsCompatible: len(msgs) == 0})
}
