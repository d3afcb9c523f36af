package config

import "sharq/broker/fault"

// Fault injection (docs/faults.md): rules set at start, in the JSON the
// control API takes, checked when the configuration loads so a bad rule
// stops the broker with its reason rather than being skipped.

func faultKeyTable() []*keyDef {
	return []*keyDef{
		newKey("sharq.faults", TypeString, "",
			`Fault rules live from start (docs/faults.md), as JSON: one rule or an array, e.g. [{"api":"Produce","error":"NOT_LEADER_OR_FOLLOWER","count":3}]. Empty: none. Rules are also added and removed at run time through the control API (sharq ctl fault add).`).
			own().nullDef().withCustom(func(v any) string {
			if _, err := fault.ParseRules(v.(string)); err != nil {
				return err.Error()
			}
			return ""
		}),
	}
}

// Faults is sharq.faults as set (checked when the configuration loaded).
func (c *Config) Faults() string {
	v, _ := c.merged("sharq.faults")
	return v
}
