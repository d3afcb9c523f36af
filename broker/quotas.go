package broker

import (
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/raftmeta"
	"sharq/raftmeta/quota"
)

// quotaLimit resolves the client quota of kind for the request's client
// from the metadata image.
func (s *Server) quotaLimit(img *raftmeta.Image, kind quota.Kind, user, clientID string) (quota.Limit, bool) {
	if len(img.ClientQuotas) == 0 {
		return quota.Limit{}, false
	}
	return quota.Resolve(func(yield func([]quota.Part, map[string]string) bool) {
		for key, values := range img.ClientQuotas {
			var parts []quota.Part
			for _, p := range raftmeta.ParseQuotaEntityKey(key) {
				parts = append(parts, quota.Part{Type: p.Type, Name: p.Name, Default: p.Default})
			}
			if !yield(parts, values) {
				return
			}
		}
	}, kind, user, clientID)
}

// throttleFor records a handled request against the client's quotas and
// returns how long to throttle it: the larger of the bandwidth throttle
// (produce request bytes, fetch response record bytes) and the request
// time throttle, as Kafka's KafkaApis does. Followers fetching
// (replica id >= 0) are not client traffic, and an API registered
// waitsInHandler is not charged request time.
func (s *Server) throttleFor(r *request, api *apiEntry, req kmsg.Request, resp kmsg.Response, inBytes int, handled time.Duration) time.Duration {
	img := s.meta.Image()
	if len(img.ClientQuotas) == 0 {
		return 0
	}
	now := time.Now()
	// Kafka's quota user is the principal's name, without "User:".
	user := strings.TrimPrefix(r.Principal(), "User:")
	var bw time.Duration
	switch req := req.(type) {
	case *kmsg.ProduceRequest:
		if l, ok := s.quotaLimit(img, quota.Produce, user, r.clientID); ok {
			bw = s.quotas.Record(quota.Produce, l, float64(inBytes), now)
		}
	case *kmsg.FetchRequest:
		if fr, ok := resp.(*kmsg.FetchResponse); ok && req.ReplicaID < 0 {
			if l, ok := s.quotaLimit(img, quota.Fetch, user, r.clientID); ok {
				n := 0
				for _, t := range fr.Topics {
					for _, p := range t.Partitions {
						n += len(p.RecordBatches)
					}
				}
				bw = s.quotas.Record(quota.Fetch, l, float64(n), now)
			}
		}
	}
	var rt time.Duration
	if l, ok := s.quotaLimit(img, quota.Request, user, r.clientID); ok && !api.waitsInHandler {
		rt = s.quotas.Record(quota.Request, l, quota.PercentOf(handled), now)
	}
	return max(bw, rt)
}
