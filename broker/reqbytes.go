package broker

import (
	"context"
	"sync"
)

// requestBytes bounds the request-frame bytes being read or handled across
// all connections (queued.max.request.bytes). Like Kafka's MemoryPool a
// frame reserves its declared size before its body is read, and a
// connection that finds no room is not read at all until there is: TCP then
// pushes back on the client. Reserving the whole frame, rather than chunk by
// chunk, is what keeps it deadlock-free: partial reservations of many large
// frames could fill the budget with none of them able to finish. Waiters
// are served in arrival order so a large frame is not starved by small ones.
type requestBytes struct {
	limit int64 // <= 0: unbounded (counted, never waits)

	mu      sync.Mutex
	used    int64
	peak    int64
	waiters []*bytesWaiter
	waited  uint64 // reservations that had to wait
}

type bytesWaiter struct {
	n     int64
	ready chan struct{} // closed once the bytes are granted
}

func newRequestBytes(limit int64) *requestBytes { return &requestBytes{limit: limit} }

// acquire reserves n bytes, waiting for room in FIFO order. It fails only
// when ctx ends first, and then holds nothing.
func (q *requestBytes) acquire(ctx context.Context, n int64) error {
	q.mu.Lock()
	if q.limit <= 0 || (len(q.waiters) == 0 && q.used+n <= q.limit) {
		q.grant(n)
		q.mu.Unlock()
		return nil
	}
	w := &bytesWaiter{n: n, ready: make(chan struct{})}
	q.waiters = append(q.waiters, w)
	q.waited++
	q.mu.Unlock()
	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
	}
	q.mu.Lock()
	select {
	case <-w.ready: // granted while we were giving up: hand it back
		q.used -= n
	default:
		for i, o := range q.waiters {
			if o == w {
				q.waiters = append(q.waiters[:i], q.waiters[i+1:]...)
				break
			}
		}
	}
	// Removing the head (or returning bytes) may let the next ones in.
	q.wake()
	q.mu.Unlock()
	return ctx.Err()
}

// release returns n bytes reserved by acquire.
func (q *requestBytes) release(n int64) {
	q.mu.Lock()
	q.used -= n
	q.wake()
	q.mu.Unlock()
}

func (q *requestBytes) grant(n int64) {
	q.used += n
	if q.used > q.peak {
		q.peak = q.used
	}
}

// wake grants waiters from the head while they fit; q.mu is held.
func (q *requestBytes) wake() {
	for len(q.waiters) > 0 && q.used+q.waiters[0].n <= q.limit {
		w := q.waiters[0]
		q.waiters[0] = nil
		q.waiters = q.waiters[1:]
		q.grant(w.n)
		close(w.ready)
	}
}

// requestBytesStats is a snapshot for metrics and tests.
type requestBytesStats struct {
	InFlight, Peak int64
	Waiting        int
	Waited         uint64
}

func (q *requestBytes) stats() requestBytesStats {
	q.mu.Lock()
	defer q.mu.Unlock()
	return requestBytesStats{InFlight: q.used, Peak: q.peak, Waiting: len(q.waiters), Waited: q.waited}
}
