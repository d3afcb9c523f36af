package broker

import (
	"container/list"
	"math/rand/v2"
	"sync"
)

// Fetch sessions (KIP-227). A session remembers the partitions a client
// fetches and what it last told the client about each, so an incremental
// fetch lists only what changed in either direction. Sessions belong to the
// broker, not to a connection: a client may reconnect and carry on. The
// cache is bounded (max.incremental.fetch.session.cache.slots) and evicts
// the least recently used session.

// fetchKey names a partition in a session.
type fetchKey struct {
	topicID [16]byte
	topic   string
	part    int32
}

// cachedPartition is what a session remembers about one partition.
type cachedPartition struct {
	fetchOffset        int64
	maxBytes           int32
	currentLeaderEpoch int32
	lastFetchedEpoch   int32
	// Last values sent to the client, to decide whether an incremental
	// response must include the partition.
	sentHW       int64
	sentLSO      int64
	sentLogStart int64
	sent         bool
}

type fetchSession struct {
	mu    sync.Mutex // held while a request reads or updates the session
	id    int32
	epoch int32 // the epoch the next request must carry
	parts map[fetchKey]*cachedPartition
	order []fetchKey // request order, for stable responses
	elem  *list.Element
}

type fetchSessionCache struct {
	mu       sync.Mutex
	max      int
	sessions map[int32]*fetchSession
	lru      *list.List // front = most recently used
}

func newFetchSessionCache(max int) *fetchSessionCache {
	return &fetchSessionCache{max: max, sessions: make(map[int32]*fetchSession), lru: list.New()}
}

// create makes a new session; it returns nil when the cache size is 0.
func (c *fetchSessionCache) create() *fetchSession {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.max <= 0 {
		return nil
	}
	for len(c.sessions) >= c.max {
		oldest := c.lru.Back()
		s := oldest.Value.(*fetchSession)
		c.lru.Remove(oldest)
		delete(c.sessions, s.id)
	}
	var id int32
	for id == 0 || c.sessions[id] != nil {
		id = rand.Int32()
	}
	s := &fetchSession{id: id, epoch: 1, parts: make(map[fetchKey]*cachedPartition)}
	s.elem = c.lru.PushFront(s)
	c.sessions[id] = s
	return s
}

// get returns a session and marks it recently used.
func (c *fetchSessionCache) get(id int32) *fetchSession {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.sessions[id]
	if s != nil {
		c.lru.MoveToFront(s.elem)
	}
	return s
}

func (c *fetchSessionCache) remove(id int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.sessions[id]; s != nil {
		c.lru.Remove(s.elem)
		delete(c.sessions, id)
	}
}

func (c *fetchSessionCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.sessions)
}

func (s *fetchSession) upsert(k fetchKey, cp cachedPartition) {
	if old := s.parts[k]; old != nil {
		old.fetchOffset, old.maxBytes = cp.fetchOffset, cp.maxBytes
		old.currentLeaderEpoch, old.lastFetchedEpoch = cp.currentLeaderEpoch, cp.lastFetchedEpoch
		return
	}
	p := cp
	s.parts[k] = &p
	s.order = append(s.order, k)
}

func (s *fetchSession) forget(k fetchKey) {
	if s.parts[k] == nil {
		return
	}
	delete(s.parts, k)
	for i, o := range s.order {
		if o == k {
			s.order = append(s.order[:i], s.order[i+1:]...)
			break
		}
	}
}
