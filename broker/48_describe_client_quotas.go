package broker

// DescribeClientQuotas: v0-1
//
// Behavior:
// * Lists the client quotas stored in the metadata (AlterClientQuotas) whose
//   entity matches every filter component: exact name (0), the default
//   entity (1) or any name of that type including the default (2); Strict
//   drops entities with types the filter does not name (KIP-546).
// * A component without an entity type, a repeated type or an exact match
//   without a name is INVALID_REQUEST.

import (
	"slices"
	"sort"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/raftmeta"
)

func init() { regKey(48, 0, 1, handleDescribeClientQuotas, coordinatorFree) }

func handleDescribeClientQuotas(r *request, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DescribeClientQuotasRequest)
	resp := req.ResponseKind().(*kmsg.DescribeClientQuotasResponse)
	fail := func(msg string) (kmsg.Response, error) {
		resp.ErrorCode, resp.ErrorMessage = errInvalidRequest, &msg
		return resp, nil
	}
	if !r.authorizeCluster(opDescribeConfigs) {
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		return resp, nil
	}
	seen := map[string]bool{}
	for _, c := range req.Components {
		switch {
		case c.EntityType == "":
			return fail("Invalid empty entity type in the filter.")
		case seen[c.EntityType]:
			return fail("Duplicate entity type in the filter: " + c.EntityType)
		case c.MatchType == 0 && c.Match == nil:
			return fail("Exact match requires an entity name for " + c.EntityType)
		case c.MatchType > 2:
			return fail("Unknown match type " + strconv.Itoa(int(c.MatchType)))
		}
		seen[c.EntityType] = true
	}
	img := r.s.meta.Image()
	keys := make([]string, 0, len(img.ClientQuotas))
	for k := range img.ClientQuotas {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	resp.Entries = []kmsg.DescribeClientQuotasResponseEntry{}
	for _, key := range keys {
		parts := raftmeta.ParseQuotaEntityKey(key)
		if !quotaFilterMatches(parts, req.Components, req.Strict) {
			continue
		}
		e := kmsg.NewDescribeClientQuotasResponseEntry()
		for _, p := range parts {
			ee := kmsg.NewDescribeClientQuotasResponseEntryEntity()
			ee.Type = p.Type
			if !p.Default {
				name := p.Name
				ee.Name = &name
			}
			e.Entity = append(e.Entity, ee)
		}
		values := img.ClientQuotas[key]
		names := make([]string, 0, len(values))
		for k := range values {
			names = append(names, k)
		}
		slices.Sort(names)
		for _, k := range names {
			v, err := strconv.ParseFloat(values[k], 64)
			if err != nil {
				continue
			}
			e.Values = append(e.Values, kmsg.DescribeClientQuotasResponseEntryValue{Key: k, Value: v})
		}
		resp.Entries = append(resp.Entries, e)
	}
	return resp, nil
}

func quotaFilterMatches(parts []raftmeta.QuotaEntity, comps []kmsg.DescribeClientQuotasRequestComponent, strict bool) bool {
	if strict && len(parts) != len(comps) {
		return false
	}
	for _, c := range comps {
		i := slices.IndexFunc(parts, func(p raftmeta.QuotaEntity) bool { return p.Type == c.EntityType })
		if i < 0 {
			return false
		}
		p := parts[i]
		switch c.MatchType {
		case 0:
			if p.Default || p.Name != *c.Match {
				return false
			}
		case 1:
			if !p.Default {
				return false
			}
		}
	}
	return true
}
