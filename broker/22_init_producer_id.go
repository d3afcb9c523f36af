package broker

// InitProducerId: v0-5
//
// Behavior:
// * Idempotent producers (no transactional id) always get a fresh producer
//   id with epoch 0, as Kafka hands out: ids come from blocks allocated
//   through the metadata store, so an id is never reused, even across
//   restarts.
// * Transactional ids are refused: sharq has no transaction coordinator yet.

import (
	"context"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { regKey(22, 0, 5, handleInitProducerID) }

func handleInitProducerID(r *request, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.InitProducerIDRequest)
	resp := req.ResponseKind().(*kmsg.InitProducerIDResponse)
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	if req.TransactionalID != nil {
		resp.ErrorCode = errTransactionalIDAuthFailed
		return resp, nil
	}
	// An idempotent producer needs IDEMPOTENT_WRITE on the cluster or
	// WRITE on some topic (Kafka's authorizeByResourceType).
	if !r.authorizeCluster(opIdempotentWrite) && !r.authorizeAnyOfType(resTopic, opWrite) {
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		return resp, nil
	}
	id, err := r.s.producerIDs.next(r.ctx)
	if err != nil {
		r.s.logger.Warn("allocate producer id", "err", err)
		resp.ErrorCode, _ = metaErrorCode(err)
		return resp, nil
	}
	resp.ProducerID, resp.ProducerEpoch = id, 0
	return resp, nil
}

// producerIDBlockSize is how many ids one metadata entry reserves.
const producerIDBlockSize = 1000

// producerIDAllocator hands out producer ids from reserved blocks.
type producerIDAllocator struct {
	s        *Server
	mu       sync.Mutex
	next_    int64
	blockEnd int64
}

func (a *producerIDAllocator) next(ctx context.Context) (int64, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.next_ >= a.blockEnd {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		first, err := a.s.meta.AllocateProducerIDs(ctx, producerIDBlockSize)
		if err != nil {
			return -1, err
		}
		a.next_, a.blockEnd = first, first+producerIDBlockSize
	}
	id := a.next_
	a.next_++
	return id, nil
}
