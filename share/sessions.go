package share

import "sync/atomic"

// Share-session epochs (KIP-932): 0 opens a session, -1 closes it.
const (
	EpochOpen  = 0
	EpochClose = -1
)

type sessionKey struct{ group, member string }

// session is a ShareFetch session: the partitions a member fetches from
// this node, the epoch its next request must carry and the connection it
// lives on (closing it releases what the member holds).
type session struct {
	epoch int32
	parts []TopicPartition
	conn  any
	// evicted is set by an injected eviction (manager_faults.go), so a
	// fetch parked under the session stops without acquiring more.
	evicted atomic.Bool
}

func (s *session) add(tp TopicPartition) bool {
	for _, p := range s.parts {
		if p == tp {
			return false
		}
	}
	s.parts = append(s.parts, tp)
	return true
}

func (s *session) forget(tp TopicPartition) {
	for i, p := range s.parts {
		if p == tp {
			s.parts = append(s.parts[:i], s.parts[i+1:]...)
			return
		}
	}
}

func nextEpoch(e int32) int32 {
	if e == 1<<31-1 {
		return 1
	}
	return e + 1
}

// sessionStep applies a request's epoch to its share session, under m.mu.
// Its epoch advances before anything else happens, so later
// partition-level failures do not roll it back (as in Kafka). fetch
// selects ShareFetch's rules (open with epoch 0, add and forget
// partitions) over ShareAcknowledge's. It copies the session's partitions
// into sc.keys and reports whether the request closes the session.
func (m *Manager) sessionStep(req *FetchRequest, fetch bool, sc *Scratch) (closing bool, code int16, msg string) {
	skey := sessionKey{req.Group, req.Member}
	m.mu.Lock()
	defer m.mu.Unlock()
	sess := m.sessions[skey]
	switch {
	case req.Epoch == EpochOpen && !fetch:
		return false, codeInvalidSessionEpch, ""
	case req.Epoch == EpochOpen:
		for i := range req.Partitions {
			if len(req.Partitions[i].Acks) > 0 {
				return false, codeInvalidRequest, "acknowledgements are not allowed when opening a share session"
			}
		}
		if sess == nil && len(m.sessions) >= m.settings(req.Group).MaxSessions {
			return false, codeSessionLimit, ""
		}
		// An old session of the key is replaced without releasing its
		// records, as in Kafka.
		sess = &session{epoch: 1}
		m.sessions[skey] = sess
	case sess == nil:
		return false, codeSessionNotFound, ""
	case req.Epoch == EpochClose:
		closing = true
		delete(m.sessions, skey)
	case req.Epoch != sess.epoch:
		return false, codeInvalidSessionEpch, ""
	default:
		sess.epoch = nextEpoch(sess.epoch)
	}
	sc.added = sc.added[:0]
	if fetch && !closing {
		for i := range req.Partitions {
			if tp := req.Partitions[i].TopicPartition; sess.add(tp) {
				sc.added = append(sc.added, tp)
			}
		}
		for _, tp := range req.Forgotten {
			sess.forget(tp)
		}
	}
	sess.conn = req.Conn
	sc.sess = sess
	sc.keys = append(sc.keys[:0], sess.parts...)
	return closing, 0, ""
}

// ReleaseConn closes the share sessions bound to a closed connection and
// releases what their members hold.
func (m *Manager) ReleaseConn(conn any) {
	type rel struct {
		group, member string
		tps           []TopicPartition
	}
	var todo []rel
	m.mu.Lock()
	for k, sess := range m.sessions {
		if sess.conn == conn {
			delete(m.sessions, k)
			todo = append(todo, rel{k.group, k.member, sess.parts})
		}
	}
	m.mu.Unlock()
	for _, t := range todo {
		m.releaseMember(t.group, t.member, t.tps)
	}
}
