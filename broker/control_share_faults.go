package broker

// Share-group faults through the control API (docs/faults.md). Each route
// calls one share.Manager method, which makes the state change the real
// event makes and logs and counts it:
//
//	POST /api/v1/share/groups/{group}/expire-locks   {"topic","partition","offsets"?}
//	POST /api/v1/share/groups/{group}/redeliver      {"topic","partition","offsets"?}
//	POST /api/v1/share/groups/{group}/fail-ack       {"topic","partition","offsets"?,"error"?}
//	POST /api/v1/share/groups/{group}/fail-dlq       {"count"}
//	POST /api/v1/share/groups/{group}/members/{member}/evict
//	GET  /api/v1/share/faults                        what was injected so far
//
// offsets left out: every record of the share-partition (fail-ack: its
// next acknowledgement, whatever it covers).

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/twmb/franz-go/pkg/kerr"

	"sharq/broker/fault"
	"sharq/share"
)

func init() {
	regControl("POST /api/v1/share/groups/{group}/expire-locks", controlShareExpireLocks)
	regControl("POST /api/v1/share/groups/{group}/redeliver", controlShareRedeliver)
	regControl("POST /api/v1/share/groups/{group}/fail-ack", controlShareFailAck)
	regControl("POST /api/v1/share/groups/{group}/fail-dlq", controlShareFailDLQ)
	regControl("POST /api/v1/share/groups/{group}/members/{member}/evict", controlShareEvict)
	regControl("GET /api/v1/share/faults", controlShareFaults)
}

// ControlSharePartitionFault is the body of expire-locks, redeliver and
// fail-ack.
type ControlSharePartitionFault struct {
	Topic     string           `json:"topic"`
	Partition int32            `json:"partition"`
	Offsets   []int64          `json:"offsets,omitempty"`
	Error     *fault.ErrorCode `json:"error,omitempty"` // fail-ack: default INVALID_RECORD_STATE
}

// ControlShareFaultResult says what a share fault changed.
type ControlShareFaultResult struct {
	Records int64 `json:"records"`
}

func (s *Server) shareForFaults() (*share.Manager, error) {
	if !s.coordinatorsLoaded() || s.share == nil {
		return nil, controlErr(http.StatusConflict, kerr.CoordinatorNotAvailable.Code, "share groups are not being served (disabled, or the coordinators are loading)")
	}
	return s.share, nil
}

// sharePartitionFault reads the body and resolves its share-partition.
func (s *Server) sharePartitionFault(r *http.Request) (*share.Manager, share.Key, ControlSharePartitionFault, error) {
	var body ControlSharePartitionFault
	m, err := s.shareForFaults()
	if err != nil {
		return nil, share.Key{}, body, err
	}
	if err := decodeControlBody(r, &body); err != nil {
		return nil, share.Key{}, body, err
	}
	t := s.meta.Image().Topics[body.Topic]
	if t == nil || body.Partition < 0 || int(body.Partition) >= len(t.Partitions) {
		return nil, share.Key{}, body, controlErr(http.StatusNotFound, errUnknownTopicOrPartition, fmt.Sprintf("no partition %s-%d", body.Topic, body.Partition))
	}
	for _, o := range body.Offsets {
		if o < 0 {
			return nil, share.Key{}, body, controlErr(http.StatusBadRequest, errInvalidRequest, fmt.Sprintf("offset %d is negative", o))
		}
	}
	return m, share.Key{Group: r.PathValue("group"), TopicID: [16]byte(t.ID), Partition: body.Partition}, body, nil
}

func shareFaultErr(err error) error {
	if errors.Is(err, share.ErrNoSharePartition) {
		return controlErr(http.StatusNotFound, 0, err.Error()+": no member has fetched it since start")
	}
	return err
}

func controlShareExpireLocks(s *Server, r *http.Request) (any, error) {
	m, k, body, err := s.sharePartitionFault(r)
	if err != nil {
		return nil, err
	}
	n, err := m.ExpireLocksNow(k, body.Offsets)
	if err != nil {
		return nil, shareFaultErr(err)
	}
	return ControlShareFaultResult{Records: n}, nil
}

func controlShareRedeliver(s *Server, r *http.Request) (any, error) {
	m, k, body, err := s.sharePartitionFault(r)
	if err != nil {
		return nil, err
	}
	n, err := m.Redeliver(k, body.Offsets)
	if err != nil {
		return nil, shareFaultErr(err)
	}
	return ControlShareFaultResult{Records: n}, nil
}

func controlShareFailAck(s *Server, r *http.Request) (any, error) {
	m, k, body, err := s.sharePartitionFault(r)
	if err != nil {
		return nil, err
	}
	var code int16
	if body.Error != nil {
		code = int16(*body.Error)
	}
	m.FailNextAck(k, body.Offsets, code)
	s.logger.Info("share fault armed: next acknowledgement fails", "group", k.Group, "topic", body.Topic, "partition", k.Partition, "offsets", body.Offsets)
	return nil, nil
}

func controlShareFailDLQ(s *Server, r *http.Request) (any, error) {
	m, err := s.shareForFaults()
	if err != nil {
		return nil, err
	}
	var body struct {
		Count int `json:"count"`
	}
	if err := decodeControlBody(r, &body); err != nil {
		return nil, err
	}
	if body.Count < 1 || body.Count > 1<<20 {
		return nil, controlErr(http.StatusBadRequest, errInvalidRequest, fmt.Sprintf("count %d: want 1 to %d", body.Count, 1<<20))
	}
	m.FailDLQWrites(r.PathValue("group"), body.Count)
	s.logger.Info("share fault armed: next dead-letter writes fail", "group", r.PathValue("group"), "count", body.Count)
	return nil, nil
}

func controlShareEvict(s *Server, r *http.Request) (any, error) {
	m, err := s.shareForFaults()
	if err != nil {
		return nil, err
	}
	if !m.EvictSession(r.PathValue("group"), r.PathValue("member")) {
		return nil, controlErr(http.StatusNotFound, kerr.ShareSessionNotFound.Code, fmt.Sprintf("member %s of share group %s has no share session on this node", r.PathValue("member"), r.PathValue("group")))
	}
	return nil, nil
}

func controlShareFaults(s *Server, r *http.Request) (any, error) {
	m, err := s.shareForFaults()
	if err != nil {
		return nil, err
	}
	return m.FaultCounts(), nil
}
