package broker

// AlterClientQuotas: v0-1
//
// Behavior:
// * Sets and removes quota values of user and client-id entities (and their
//   <default>) in the metadata, where the broker enforces them (quotas.go):
//   producer_byte_rate, consumer_byte_rate, request_percentage.
// * Refused with INVALID_REQUEST, naming the reason: an empty or repeated
//   entity type, a type other than user/client-id (sharq has no ip
//   connection-rate quotas), an unknown key, controller_mutation_rate
//   (sharq does not throttle topic mutations), a negative value or a
//   fractional byte rate. ValidateOnly stops after validation.

import (
	"fmt"
	"math"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/raftmeta"
	"sharq/raftmeta/quota"
)

func init() { regKey(49, 0, 1, handleAlterClientQuotas) }

func handleAlterClientQuotas(r *request, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.AlterClientQuotasRequest)
	resp := req.ResponseKind().(*kmsg.AlterClientQuotasResponse)
	allowed := r.authorizeCluster(opAlterConfigs)
	for _, e := range req.Entries {
		re := kmsg.NewAlterClientQuotasResponseEntry()
		for _, p := range e.Entity {
			re.Entity = append(re.Entity, kmsg.AlterClientQuotasResponseEntryEntity{Type: p.Type, Name: p.Name})
		}
		if !allowed {
			re.ErrorCode = kerr.ClusterAuthorizationFailed.Code
			resp.Entries = append(resp.Entries, re)
			continue
		}
		entity, set, remove, msg := validateQuotaEntry(e)
		if msg == "" && !req.ValidateOnly {
			if err := r.s.meta.AlterClientQuotas(r.ctx, entity, set, remove); err != nil {
				code, m := metaErrorCode(err)
				re.ErrorCode, re.ErrorMessage = code, &m
			}
		} else if msg != "" {
			re.ErrorCode, re.ErrorMessage = errInvalidRequest, &msg
		}
		resp.Entries = append(resp.Entries, re)
	}
	return resp, nil
}

func validateQuotaEntry(e kmsg.AlterClientQuotasRequestEntry) (entity []raftmeta.QuotaEntity, set map[string]string, remove []string, msg string) {
	if len(e.Entity) == 0 {
		return nil, nil, nil, "Invalid empty client quota entity"
	}
	seen := map[string]bool{}
	for _, p := range e.Entity {
		switch {
		case p.Type == "ip":
			return nil, nil, nil, "sharq does not enforce ip quotas (connection_creation_rate)"
		case p.Type != "user" && p.Type != "client-id":
			return nil, nil, nil, "Unhandled client quota entity type: " + p.Type
		case seen[p.Type]:
			return nil, nil, nil, "Duplicate " + p.Type + " entity in the client quota entity"
		}
		seen[p.Type] = true
		qe := raftmeta.QuotaEntity{Type: p.Type, Default: p.Name == nil}
		if p.Name != nil {
			qe.Name = *p.Name
		}
		entity = append(entity, qe)
	}
	set = map[string]string{}
	for _, op := range e.Ops {
		known := false
		for _, k := range quota.Keys {
			known = known || k == op.Key
		}
		switch {
		case op.Key == "controller_mutation_rate":
			return nil, nil, nil, "sharq does not enforce controller_mutation_rate quotas"
		case !known:
			return nil, nil, nil, "Invalid configuration key " + op.Key
		case op.Remove:
			remove = append(remove, op.Key)
			continue
		case op.Value < 0 || math.IsNaN(op.Value) || math.IsInf(op.Value, 0):
			return nil, nil, nil, fmt.Sprintf("Invalid value %v for configuration key %s: must be at least 0", op.Value, op.Key)
		case op.Key != "request_percentage" && op.Value != math.Trunc(op.Value):
			return nil, nil, nil, fmt.Sprintf("Invalid value %v for configuration key %s: must be a whole number of bytes per second", op.Value, op.Key)
		}
		set[op.Key] = strconv.FormatFloat(op.Value, 'f', -1, 64)
	}
	return entity, set, remove, ""
}
