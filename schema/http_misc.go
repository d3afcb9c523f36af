package schema

// /, /contexts (ContextsResource) and /v1/metadata (ServerMetadataResource).

import "net/http"

func (h *handler) miscRoutes() {
	root := func(c *call) { c.ok(http.StatusOK, struct{}{}) }
	h.handle(http.MethodGet, "/", root)
	h.handle(http.MethodPost, "/", root)
	h.handle(http.MethodGet, "/contexts", (*call).listContexts)
	h.handle(http.MethodDelete, "/contexts/{context}", (*call).deleteContext)
	h.handle(http.MethodGet, "/v1/metadata/id", (*call).clusterID)
}

func (c *call) listContexts() {
	if !c.allow(OpDescribe, "") {
		return
	}
	all := c.h.reg.Contexts()
	if p := c.query.Get("contextPrefix"); p != "" {
		kept := all[:0]
		for _, ctx := range all {
			if len(ctx) >= len(p) && ctx[:len(p)] == p {
				kept = append(kept, ctx)
			}
		}
		all = kept
	}
	if out, ok := page(c, all, unlimited, unlimited); ok {
		c.ok(http.StatusOK, out)
	}
}

func (c *call) deleteContext() {
	if !c.allow(OpDelete, "") {
		return
	}
	if e := c.h.reg.DeleteContext(c.ctx(), c.vars["context"]); e != nil {
		c.fail(e)
		return
	}
	c.ok(http.StatusNoContent, nil)
}

// clusterID is ServerClusterId: the Kafka cluster and the registry's group.
func (c *call) clusterID() {
	o := c.h.reg.opts
	c.ok(http.StatusOK, map[string]any{"scope": map[string]any{
		"path":     []string{},
		"clusters": map[string]string{"kafka-cluster": o.ClusterID, "schema-registry-cluster": o.GroupID},
	}})
}
