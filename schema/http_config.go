package schema

// /config (ConfigResource) and /mode (ModeResource). The default context
// (":.:", or no subject) is the global config and mode.

import (
	"encoding/json"
	"fmt"
	"net/http"
)

func (h *handler) configRoutes() {
	h.handle(http.MethodGet, "/config", (*call).getConfig)
	h.handle(http.MethodPut, "/config", (*call).putConfig)
	h.handle(http.MethodDelete, "/config", (*call).deleteConfig)
	h.handle(http.MethodGet, "/config/{subject}", (*call).getConfig)
	h.handle(http.MethodPut, "/config/{subject}", (*call).putConfig)
	h.handle(http.MethodDelete, "/config/{subject}", (*call).deleteConfig)
}

func (h *handler) modeRoutes() {
	h.handle(http.MethodGet, "/mode", (*call).getMode)
	h.handle(http.MethodPut, "/mode", (*call).putMode)
	h.handle(http.MethodDelete, "/mode", (*call).deleteMode)
	h.handle(http.MethodGet, "/mode/{subject}", (*call).getMode)
	h.handle(http.MethodPut, "/mode/{subject}", (*call).putMode)
	h.handle(http.MethodDelete, "/mode/{subject}", (*call).deleteMode)
}

// scope is the subject a config or mode endpoint is about ("" global) and
// whether the principal may do op on it.
func (c *call) scope(op Operation) (string, bool) {
	s := c.vars["subject"]
	return s, c.allow(op, scopeSubject(s))
}

func (c *call) getConfig() {
	s, ok := c.scope(OpReadConfig)
	if !ok {
		return
	}
	cfg, e := c.h.reg.GetConfig(s, c.boolParam("defaultToGlobal"))
	if e != nil {
		c.fail(e)
		return
	}
	c.ok(http.StatusOK, cfg)
}

func (c *call) putConfig() {
	s, ok := c.scope(OpWriteConfig)
	if !ok {
		return
	}
	var fields map[string]json.RawMessage
	if !c.body(&fields) {
		return
	}
	u, err := parseConfigUpdate(fields)
	if err != nil {
		c.fail(errBadRequest(err.Error()))
		return
	}
	cfg, e := c.h.reg.UpdateConfig(c.ctx(), s, u)
	if e != nil {
		c.fail(e)
		return
	}
	c.ok(http.StatusOK, toConfigUpdateJSON(cfg))
}

// parseConfigUpdate reads ConfigUpdateRequest's optional fields: present
// with a value, present as null (cleared), or absent (kept).
func parseConfigUpdate(fields map[string]json.RawMessage) (*ConfigUpdate, error) {
	u := &ConfigUpdate{}
	str := func(name string, dst **string, set *bool) error {
		raw, ok := fields[name]
		if !ok {
			return nil
		}
		*set = true
		return unmarshalField(name, raw, dst)
	}
	boolean := func(name string, dst **bool, set *bool) error {
		raw, ok := fields[name]
		if !ok {
			return nil
		}
		*set = true
		return unmarshalField(name, raw, dst)
	}
	md := func(name string, dst **Metadata, set *bool) error {
		raw, ok := fields[name]
		if !ok {
			return nil
		}
		*set = true
		if err := unmarshalField(name, raw, dst); err != nil {
			return err
		}
		(*dst).normalize()
		return nil
	}
	rules := func(name string, dst **RuleSet, set *bool) error {
		raw, ok := fields[name]
		if !ok {
			return nil
		}
		*set = true
		if err := unmarshalField(name, raw, dst); err != nil {
			return err
		}
		return (*dst).normalize()
	}
	for _, err := range []error{
		str("alias", &u.Alias, &u.SetAlias),
		str("aliasForDeks", &u.AliasForDeks, &u.SetAliasForDeks),
		boolean("normalize", &u.Normalize, &u.SetNormalize),
		boolean("validateFields", &u.ValidateFields, &u.SetValidateFields),
		boolean("validateNewSchemas", &u.ValidateNewSchemas, &u.SetValidateNewSchemas),
		boolean("validateRules", &u.ValidateRules, &u.SetValidateRules),
		str("compatibility", &u.CompatibilityLevel, &u.SetCompatibilityLevel),
		str("compatibilityPolicy", &u.CompatibilityPolicy, &u.SetCompatibilityPolicy),
		str("compatibilityGroup", &u.CompatibilityGroup, &u.SetCompatibilityGroup),
		md("defaultMetadata", &u.DefaultMetadata, &u.SetDefaultMetadata),
		md("overrideMetadata", &u.OverrideMetadata, &u.SetOverrideMetadata),
		rules("defaultRuleSet", &u.DefaultRuleSet, &u.SetDefaultRuleSet),
		rules("overrideRuleSet", &u.OverrideRuleSet, &u.SetOverrideRuleSet),
	} {
		if err != nil {
			return nil, err
		}
	}
	return u, nil
}

func unmarshalField(name string, raw json.RawMessage, dst any) error {
	if err := json.Unmarshal(raw, dst); err != nil {
		return fmt.Errorf("Cannot deserialize field %q: %v", name, err)
	}
	return nil
}

func (c *call) deleteConfig() {
	s, ok := c.scope(OpWriteConfig)
	if !ok {
		return
	}
	cfg, e := c.h.reg.DeleteConfig(c.ctx(), s)
	if e != nil {
		c.fail(e)
		return
	}
	c.ok(http.StatusOK, cfg)
}

func (c *call) getMode() {
	s, ok := c.scope(OpReadConfig)
	if !ok {
		return
	}
	m, e := c.h.reg.GetMode(s, c.boolParam("defaultToGlobal"))
	if e != nil {
		c.fail(e)
		return
	}
	c.ok(http.StatusOK, modeJSON{m})
}

func (c *call) putMode() {
	s, ok := c.scope(OpWriteConfig)
	if !ok {
		return
	}
	var body struct {
		Mode *string `json:"mode"`
	}
	if !c.body(&body) {
		return
	}
	if e := c.h.reg.SetMode(c.ctx(), s, body.Mode, c.boolParam("force")); e != nil {
		c.fail(e)
		return
	}
	// Confluent answers with the request as it came.
	mode := ""
	if body.Mode != nil {
		mode = *body.Mode
	}
	c.ok(http.StatusOK, modeJSON{mode})
}

func (c *call) deleteMode() {
	s, ok := c.scope(OpWriteConfig)
	if !ok {
		return
	}
	m, e := c.h.reg.DeleteMode(c.ctx(), s, c.boolParam("recursive"))
	if e != nil {
		c.fail(e)
		return
	}
	c.ok(http.StatusOK, modeJSON{m})
}
