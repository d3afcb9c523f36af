package broker

// IncrementalAlterConfigs: v0-1
//
// Behavior:
// * SET, DELETE, APPEND and SUBTRACT (list-valued keys) on TOPIC, BROKER
//   and GROUP resources (group configs: consumer.*, share.*, streams.*,
//   errors.deadletterqueue.*, range-checked against the broker's min/max
//   keys and stored in the metadata image). Every operation is validated
//   against the resulting value first; one bad operation fails the
//   resource and nothing of it is applied. A key named twice in one resource is INVALID_REQUEST.
//   ValidateOnly stops after validation.

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { regKey(44, 0, 1, handleIncrementalAlterConfigs) }

func handleIncrementalAlterConfigs(r *request, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.IncrementalAlterConfigsRequest)
	resp := req.ResponseKind().(*kmsg.IncrementalAlterConfigsResponse)
	for _, rr := range req.Resources {
		rs := kmsg.NewIncrementalAlterConfigsResponseResource()
		rs.ResourceType, rs.ResourceName = rr.ResourceType, rr.ResourceName
		code, msg := r.incrementalAlter(rr, req.ValidateOnly)
		rs.ErrorCode = code
		if msg != "" {
			// (kept for a success that carries a message)
			rs.ErrorMessage = &msg
		}
		resp.Resources = append(resp.Resources, rs)
	}
	return resp, nil
}

func (r *request) incrementalAlter(rr kmsg.IncrementalAlterConfigsRequestResource, validateOnly bool) (int16, string) {
	if code := r.configAuthError(rr.ResourceType, rr.ResourceName, opAlterConfigs); code != 0 {
		return code, errorMessage(code)
	}
	t := r.resolveConfigResource(rr.ResourceType, rr.ResourceName)
	if t.errCode != 0 {
		return t.errCode, t.errMsg
	}
	cur := r.currentConfigs(t, rr.ResourceType)
	set := map[string]string{}
	var del []string
	seen := map[string]bool{}
	for _, c := range rr.Configs {
		if seen[c.Name] {
			return errInvalidRequest, fmt.Sprintf("Error due to duplicate config keys : %s", c.Name)
		}
		seen[c.Name] = true
		value := ""
		if c.Value != nil {
			value = *c.Value
		}
		switch c.Op {
		case kmsg.IncrementalAlterConfigOpSet:
			if c.Value == nil {
				return errInvalidRequest, fmt.Sprintf("Null value not supported for : %s", c.Name)
			}
		case kmsg.IncrementalAlterConfigOpDelete:
			if err := validateConfigName(rr.ResourceType, c.Name); err != nil {
				return errInvalidConfig, err.Error()
			}
			del = append(del, c.Name)
			continue
		case kmsg.IncrementalAlterConfigOpAppend, kmsg.IncrementalAlterConfigOpSubtract:
			base, ok := cur[c.Name]
			if !ok {
				base = r.currentEffectiveValue(t, rr.ResourceType, c.Name)
			}
			value = listOp(base, value, c.Op == kmsg.IncrementalAlterConfigOpAppend)
		default:
			return errInvalidRequest, fmt.Sprintf("Unknown operation type %d for config %s", c.Op, c.Name)
		}
		if err := r.validateConfigChange(t, rr.ResourceType, c.Name, value); err != nil {
			return configChangeError(err)
		}
		set[c.Name] = value
	}
	if rr.ResourceType == resourceGroup {
		if err := r.validateGroupConfigSet(t, set, del); err != nil {
			return errInvalidConfig, err.Error()
		}
	}
	if rr.ResourceType == resourceClientMetrics {
		if code, msg := r.validateClientMetricsSet(t, set, del); code != 0 {
			return code, msg
		}
	}
	if validateOnly {
		return 0, ""
	}
	if err := r.applyConfigChange(t, rr.ResourceType, set, del); err != nil {
		return metaErrorCode(err)
	}
	return 0, ""
}
