package raftmeta

import (
	"context"
	"net/url"
	"slices"
	"strings"
)

// QuotaEntity is one part of a client quota entity: a type ("user",
// "client-id") and a name; Default is Kafka's <default> entity (null name).
type QuotaEntity struct {
	Type    string
	Name    string
	Default bool
}

// QuotaEntityKey is the canonical key of an entity in Image.ClientQuotas:
// its parts sorted by type, "type=escaped-name" or "type" for the default,
// joined by "&".
func QuotaEntityKey(parts []QuotaEntity) string {
	s := slices.Clone(parts)
	slices.SortFunc(s, func(a, b QuotaEntity) int { return strings.Compare(a.Type, b.Type) })
	out := make([]string, len(s))
	for i, p := range s {
		out[i] = url.QueryEscape(p.Type)
		if !p.Default {
			out[i] += "=" + url.QueryEscape(p.Name)
		}
	}
	return strings.Join(out, "&")
}

// ParseQuotaEntityKey is QuotaEntityKey's inverse.
func ParseQuotaEntityKey(key string) []QuotaEntity {
	var out []QuotaEntity
	for _, part := range strings.Split(key, "&") {
		typ, name, named := strings.Cut(part, "=")
		t, _ := url.QueryUnescape(typ)
		n, _ := url.QueryUnescape(name)
		out = append(out, QuotaEntity{Type: t, Name: n, Default: !named})
	}
	return out
}

// AlterClientQuotas sets, then removes, quota values of one entity.
func (s *Store) AlterClientQuotas(ctx context.Context, entity []QuotaEntity, set map[string]string, remove []string) error {
	_, err := s.propose(ctx, &alterConfigsCmd{Resource: resourceClientQuota, Entity: QuotaEntityKey(entity), Set: set, Delete: remove})
	return err
}

// AlterClientMetrics sets, then removes, config keys of the client metrics
// subscription name (KIP-714); a subscription left without keys is gone.
// Validating keys and values is the caller's (clientmetrics.Validate).
func (s *Store) AlterClientMetrics(ctx context.Context, name string, set map[string]string, remove []string) error {
	_, err := s.propose(ctx, &alterConfigsCmd{Resource: resourceClientMetrics, Entity: name, Set: set, Delete: remove})
	return err
}
