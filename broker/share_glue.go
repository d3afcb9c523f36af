package broker

import (
	"net"

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
// state store when one is open, else memory.
func (s *Server) newSharePersister() share.Persister {
	if db := s.stateDB(); db != nil {
		return share.NewPebblePersister(db)
	}
	return share.NewMemPersister()
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
			p.state = share.State{}
			p.sp.AppendState(&p.state)
			if err := st.persister.Write(p.key.persistKey(), &p.state, false); err != nil {
				p.mu.Unlock()
				return err
			}
		}
		p.mu.Unlock()
	}
	return st.persister.Flush()
}
