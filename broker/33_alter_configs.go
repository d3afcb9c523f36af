package broker

// AlterConfigs: v0-2
//
// Behavior:
// * Replaces the whole set of dynamic configs of a TOPIC, BROKER or GROUP
//   resource (keys not named are removed), as the deprecated Kafka API does. Every
//   value is validated first; one bad value fails the resource and nothing
//   of it is applied. ValidateOnly stops after validation.

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { regKey(33, 0, 2, handleAlterConfigs) }

func handleAlterConfigs(r *request, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.AlterConfigsRequest)
	resp := req.ResponseKind().(*kmsg.AlterConfigsResponse)
	for _, rr := range req.Resources {
		rs := kmsg.NewAlterConfigsResponseResource()
		rs.ResourceType, rs.ResourceName = rr.ResourceType, rr.ResourceName
		code, msg := r.alterConfigs(rr, req.ValidateOnly)
		rs.ErrorCode = code
		if msg != "" {
			// (kept for a success that carries a message)
			rs.ErrorMessage = &msg
		}
		resp.Resources = append(resp.Resources, rs)
	}
	return resp, nil
}

func (r *request) alterConfigs(rr kmsg.AlterConfigsRequestResource, validateOnly bool) (int16, string) {
	if code := r.configAuthError(rr.ResourceType, rr.ResourceName, opAlterConfigs); code != 0 {
		return code, errorMessage(code)
	}
	t := r.resolveConfigResource(rr.ResourceType, rr.ResourceName)
	if t.errCode != 0 {
		return t.errCode, t.errMsg
	}
	set := make(map[string]string, len(rr.Configs))
	for _, c := range rr.Configs {
		if c.Value == nil {
			return errInvalidRequest, fmt.Sprintf("Null value not supported for : %s", c.Name)
		}
		if err := r.validateConfigChange(t, rr.ResourceType, c.Name, *c.Value); err != nil {
			return configChangeError(err)
		}
		set[c.Name] = *c.Value
	}
	var del []string
	for k := range r.currentConfigs(t, rr.ResourceType) {
		if _, keep := set[k]; !keep {
			del = append(del, k)
		}
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
