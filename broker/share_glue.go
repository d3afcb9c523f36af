package broker

import (
	"fmt"
	"net"
	"path/filepath"

	"github.com/cockroachdb/pebble"

	"sharq/share"
)

// shareGroupsEnabled: every share RPC answers UNSUPPORTED_VERSION unless the
// share.version feature is finalized at 1 or more, as Kafka checks.
func (s *Server) shareGroupsEnabled() bool {
	return s.meta.Image().Features["share.version"] >= 1
}

// isOtherGroupType reports whether a group id is used by a group of another
// type (classic or consumer): share heartbeats for it are refused.
func (s *Server) isOtherGroupType(id string) bool {
	return s.coord.groups != nil && s.coord.groups.Exists(id)
}

// clientHost is the peer address as Kafka's tools print it (Java's
// InetAddress.toString: "/127.0.0.1").
func (c *conn) clientHost() string {
	if c == nil {
		return ""
	}
	if a, ok := c.nc.RemoteAddr().(*net.TCPAddr); ok {
		return "/" + a.IP.String()
	}
	return ""
}

// dropShareSessions closes the share sessions bound to a closed connection
// and releases what their members hold.
func (s *Server) dropShareSessions(c *conn) {
	if !s.coordinatorsLoaded() {
		// A connection that opened a share session waited for the
		// coordinators; this one cannot have any.
		return
	}
	st := s.share
	if st == nil {
		return
	}
	type rel struct {
		member string
		keys   []sharePartKey
	}
	var todo []rel
	st.mu.Lock()
	for k, sess := range st.sessions {
		if sess.conn == c {
			delete(st.sessions, k)
			todo = append(todo, rel{k.member, append([]sharePartKey(nil), sess.parts...)})
		}
	}
	st.mu.Unlock()
	for _, t := range todo {
		st.releaseMember(t.member, t.keys)
	}
}

// newSharePersister picks where share-partition state lives: the node's
// state store when one is open, else memory. On the state store, durable
// writes go through a journal (<state dir>/share.journal) that reaches the
// page cache without an fsync, as Kafka's share state does; with
// log.flush.interval.messages=1 the journal fsyncs every write.
func (s *Server) newSharePersister() (share.Persister, error) {
	db := s.stateDB()
	if db == nil {
		return share.NewMemPersister(), nil
	}
	path := filepath.Join(s.coord.stateDir, "share.journal")
	syncEvery := s.effectiveConfig().LogFlushIntervalMessages == 1
	p, err := share.OpenJournaledPersister(db, path, syncEvery, s.logger.With("component", "share-journal"))
	if err != nil {
		return nil, fmt.Errorf("open share state: %w", err)
	}
	s.coord.shareJournal = p
	return p, nil
}

// stateDB is the node's state store (<log.dirs>/state), nil when not open.
func (s *Server) stateDB() *pebble.DB { return s.coord.stateDB }

// close stops the share timers and makes pending share state durable; it
// runs before the state store closes.
func (st *shareState) close() error {
	st.mu.Lock()
	if st.expiry != nil {
		st.expiry.Stop()
	}
	parts := make([]*sharePart, 0, len(st.parts))
	for _, p := range st.parts {
		parts = append(parts, p)
	}
	st.mu.Unlock()
	for _, p := range parts {
		p.mu.Lock()
		if p.timer != nil {
			p.timer.Stop()
		}
		if p.sp.Dirty() {
			p.stageLocked(share.Effects{Persist: true})
		}
		// The latest snapshot, even one whose commit failed earlier.
		w := pendingWrite{seq: p.stagedSeq}
		p.mu.Unlock()
		if err := st.commit(p, w); err != nil {
			return err
		}
	}
	return st.persister.Flush()
}
