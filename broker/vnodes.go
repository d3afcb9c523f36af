package broker

// Virtual brokers (sharq.virtual.brokers=N, docs/virtual-brokers.md): this
// process serves node ids node.id .. node.id+N-1, each with its own copy of
// every configured listener, over the one log of each partition. The
// metadata image says which node leads each partition (every node is a
// replica and, while up, in sync); the coordinators of a group, a
// transactional id and a share group are the leaders of the key's
// partition of __consumer_offsets / __transaction_state, as on Kafka. A
// request is answered for real only on the node Kafka would answer it on;
// elsewhere it gets Kafka's NOT_LEADER_OR_FOLLOWER / NOT_COORDINATOR.
//
// With N = 1 nothing here is consulted on a request path: every check is
// behind Server.virtual.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/config"
	"sharq/raftmeta"
)

// vnode is one node id this process serves.
type vnode struct {
	id int32
	up atomic.Bool
	// listeners (by cfg.Listeners index) while up; advertised are their
	// addresses, kept while down so the node reopens on the same ports.
	listeners  []net.Listener
	advertised []config.Listener
	bound      []int
}

// virtualNodeIDs are the node ids cfg makes this process serve.
func virtualNodeIDs(cfg *config.Config) []int32 {
	n := max(cfg.VirtualBrokers, 1)
	ids := make([]int32, n)
	for i := range ids {
		ids[i] = cfg.NodeID + int32(i)
	}
	return ids
}

func (s *Server) initVirtualNodes() {
	for _, id := range virtualNodeIDs(s.cfg) {
		v := &vnode{id: id}
		v.up.Store(true)
		s.vnodes = append(s.vnodes, v)
	}
	s.virtual = len(s.vnodes) > 1
	s.vstop = make(chan struct{})
}

// singleProcess reports whether every broker of the cluster is this
// process (no multi-node quorum): then the registered brokers that are not
// its node ids are left over from a larger sharq.virtual.brokers and are
// neither listed nor given replicas.
func (s *Server) singleProcess() bool {
	vs, err := parseVoters(s.cfg.ControllerQuorumVoters)
	return err == nil && len(vs) <= 1
}

func (s *Server) vnode(id int32) *vnode {
	i := int(id - s.cfg.NodeID)
	if i < 0 || i >= len(s.vnodes) {
		return nil
	}
	return s.vnodes[i]
}

// listenVirtual binds the listeners of the node ids after node.id, each
// listener's port plus the node's offset (ephemeral when the configured
// port is 0), registers those nodes, creates the coordinators' internal
// topics and spreads every partition over the nodes.
func (s *Server) listenVirtual(ctx context.Context) error {
	s.vmu.Lock()
	defer s.vmu.Unlock()
	s.vnodes[0].listeners = s.listeners
	s.vnodes[0].advertised = s.advertised
	for _, ln := range s.listeners {
		s.vnodes[0].bound = append(s.vnodes[0].bound, ln.Addr().(*net.TCPAddr).Port)
	}
	for k, v := range s.vnodes[1:] {
		off := k + 1
		for j, l := range s.cfg.Listeners {
			port := 0
			if l.Port != 0 {
				port = l.Port + off
			}
			addr := net.JoinHostPort(l.Host, strconv.Itoa(port))
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return fmt.Errorf("listen %s://%s for virtual broker %d: %w", l.Name, addr, v.id, err)
			}
			v.listeners = append(v.listeners, ln)
			first := s.advertised[j]
			bound := ln.Addr().(*net.TCPAddr).Port
			v.bound = append(v.bound, bound)
			adv := first
			adv.Port = bound
			if first.Port != s.listeners[j].Addr().(*net.TCPAddr).Port {
				// An advertised port of its own (a port mapping): the
				// virtual nodes' follow it.
				adv.Port = first.Port + off
			}
			v.advertised = append(v.advertised, adv)
		}
		a := v.advertised[0]
		if err := s.meta.RegisterBroker(ctx, raftmeta.Broker{NodeID: v.id, Host: a.Host, Port: int32(a.Port), Rack: s.cfg.BrokerRack}); err != nil {
			return fmt.Errorf("register virtual broker %d: %w", v.id, err)
		}
	}
	if !s.singleProcess() {
		return nil
	}
	if s.virtual {
		for _, name := range []string{"__consumer_offsets", "__transaction_state"} {
			if err := s.ensureInternalTopic(ctx, name); err != nil {
				return err
			}
		}
	}
	ids := make([]int32, len(s.vnodes))
	for i, v := range s.vnodes {
		ids[i] = v.id
	}
	if err := s.meta.SpreadReplicas(ctx, ids); err != nil {
		return fmt.Errorf("place partitions on nodes %v: %w", ids, err)
	}
	return nil
}

// serveVirtual runs the accept loops of the node ids after node.id.
func (s *Server) serveVirtual() {
	for _, v := range s.vnodes[1:] {
		s.acceptVirtual(v)
	}
}

func (s *Server) acceptVirtual(v *vnode) {
	for j, ln := range v.listeners {
		s.bgWG.Add(1)
		go func() {
			defer s.bgWG.Done()
			s.acceptLoop(ln, j, v.id)
		}()
	}
}

func (s *Server) closeVirtualListeners() {
	s.vmu.Lock()
	for _, v := range s.vnodes {
		for _, ln := range v.listeners {
			ln.Close()
		}
	}
	s.vmu.Unlock()
	if s.vstop != nil {
		s.vstopMu.Do(func() { close(s.vstop) })
	}
}

// nodeIDs are the node ids replicas go to: this process's, or in a
// multi-node quorum every registered broker.
func (s *Server) nodeIDs(img *raftmeta.Image) []int32 {
	if !s.singleProcess() {
		return sortedBrokerIDs(img)
	}
	ids := make([]int32, 0, len(s.vnodes))
	for _, v := range s.vnodes {
		if _, ok := img.Brokers[v.id]; ok {
			ids = append(ids, v.id)
		}
	}
	return ids
}

// listedBroker reports whether a registered broker is described to
// clients, and by which address when it is one of this process's nodes
// (the copy of the listener the client came in on).
func (r *request) listedBroker(id int32) (adv config.Listener, ours, listed bool) {
	s := r.s
	v := s.vnode(id)
	if v == nil {
		return adv, false, !s.singleProcess()
	}
	l := 0
	if r.c != nil {
		l = r.c.listener
	}
	if id == s.cfg.NodeID && l < len(s.advertised) {
		return s.advertised[l], true, true
	}
	if l < len(v.advertised) {
		return v.advertised[l], true, true
	}
	return adv, false, true
}

// nodeUp reports whether node id accepts connections.
func (s *Server) nodeUp(id int32) bool {
	v := s.vnode(id)
	return v != nil && v.up.Load()
}

// ---- where a request belongs ----

// notLeader reports whether this connection's node does not lead the
// partition: what Kafka answers NOT_LEADER_OR_FOLLOWER for.
func (r *request) notLeader(p raftmeta.Partition) bool {
	return r.s.virtual && r.c != nil && p.Leader != r.c.node
}

// coordinatorTopic is the internal topic whose partition leaders are the
// coordinators of kind.
type coordinatorTopic string

const (
	groupCoordinator coordinatorTopic = "__consumer_offsets"
	txnCoordinator   coordinatorTopic = "__transaction_state"
)

// coordinatorOf is the node that coordinates key: the leader of the key's
// partition (Java's String.hashCode, as Kafka's partitionFor) of the
// internal topic; node.id while the topic does not exist.
func (s *Server) coordinatorOf(kind coordinatorTopic, key string) (node int32, partition int32) {
	t := s.meta.Image().Topics[string(kind)]
	if t == nil || len(t.Partitions) == 0 {
		return s.cfg.NodeID, -1
	}
	p := javaHashPartition(key, int32(len(t.Partitions)))
	return t.Partitions[p].Leader, p
}

// notCoordinator reports whether this connection's node does not
// coordinate key: what Kafka answers NOT_COORDINATOR for.
func (r *request) notCoordinator(kind coordinatorTopic, key string) bool {
	if !r.s.virtual || r.c == nil {
		return false
	}
	node, _ := r.s.coordinatorOf(kind, key)
	return node != r.c.node
}

// javaHashPartition is Utils.abs(key.hashCode()) % n, key hashed as Java's
// String (UTF-16 code units).
func javaHashPartition(key string, n int32) int32 {
	var h int32
	for _, r := range key {
		if r >= 0x10000 { // a UTF-16 surrogate pair
			r -= 0x10000
			h = 31*h + (0xD800 + (r >> 10))
			h = 31*h + (0xDC00 + (r & 0x3FF))
			continue
		}
		h = 31*h + r
	}
	return (h & 0x7fffffff) % n
}

// leaderEndpoint is the KIP-951 endpoint of a leader named in a
// NOT_LEADER_OR_FOLLOWER answer, on the listener the client used.
func (r *request) leaderEndpoint(id int32) (host string, port int32, rack *string, ok bool) {
	img := r.s.meta.Image()
	b, registered := img.Brokers[id]
	if !registered {
		return "", 0, nil, false
	}
	host, port = b.Host, b.Port
	if adv, ours, _ := r.listedBroker(id); ours {
		host, port = adv.Host, int32(adv.Port)
	}
	if b.Rack != "" {
		rk := b.Rack
		rack = &rk
	}
	return host, port, rack, true
}

// produceNotLeader fills a produce partition's NOT_LEADER_OR_FOLLOWER with
// the current leader (KIP-951, v10+) and adds its endpoint once.
func (r *request) produceNotLeader(resp *kmsg.ProduceResponse, sp *kmsg.ProduceResponseTopicPartition, p raftmeta.Partition) {
	sp.ErrorCode = errNotLeaderOrFollower
	if r.version < 10 {
		return
	}
	sp.CurrentLeader.LeaderID, sp.CurrentLeader.LeaderEpoch = p.Leader, p.LeaderEpoch
	for _, b := range resp.Brokers {
		if b.NodeID == p.Leader {
			return
		}
	}
	if host, port, rack, ok := r.leaderEndpoint(p.Leader); ok {
		b := kmsg.NewProduceResponseBroker()
		b.NodeID, b.Host, b.Port, b.Rack = p.Leader, host, port, rack
		resp.Brokers = append(resp.Brokers, b)
	}
}

// errLastNode is StopNode's refusal to leave no node up.
var errLastNode = errors.New("the last node that is up cannot be stopped")

// offlineReplicas are the replicas on stopped virtual nodes, as Kafka lists
// the replicas on brokers that are not alive.
func (s *Server) offlineReplicas(replicas []int32) []int32 {
	out := []int32{}
	if !s.virtual {
		return out
	}
	for _, id := range replicas {
		if v := s.vnode(id); v != nil && !v.up.Load() {
			out = append(out, id)
		}
	}
	return out
}

// notLeaderOf is notLeader by name (a served partition: it exists).
func (r *request) notLeaderOf(topic string, partition int32) bool {
	t := r.s.meta.Image().Topics[topic]
	return t != nil && int(partition) < len(t.Partitions) && r.notLeader(t.Partitions[partition])
}

// shareNotLeader is share.FetchRequest.NotLeader for this connection's
// node, made once per connection.
func (c *conn) shareNotLeader() func(topicID [16]byte, partition int32) bool {
	if c.shareLeads == nil {
		c.shareLeads = func(topicID [16]byte, partition int32) bool {
			t := c.s.meta.Image().TopicsByID[raftmeta.UUID(topicID)]
			return t != nil && partition >= 0 && int(partition) < len(t.Partitions) && t.Partitions[partition].Leader != c.node
		}
	}
	return c.shareLeads
}

// shareNotLeaderHint is a share partition's current leader and epoch for
// its NOT_LEADER_OR_FOLLOWER answer; endpoint is called with the leader's
// address (KIP-951's NodeEndpoints).
func (r *request) shareNotLeaderHint(topicID [16]byte, partition int32, endpoint func(id int32, host string, port int32, rack *string)) (int32, int32) {
	t := r.s.meta.Image().TopicsByID[raftmeta.UUID(topicID)]
	if t == nil || partition < 0 || int(partition) >= len(t.Partitions) {
		return -1, -1
	}
	p := t.Partitions[partition]
	if host, port, rack, ok := r.leaderEndpoint(p.Leader); ok {
		endpoint(p.Leader, host, port, rack)
	}
	return p.Leader, p.LeaderEpoch
}

// node is the node id the request came to.
func (r *request) node() int32 {
	if r.c != nil {
		return r.c.node
	}
	return r.s.cfg.NodeID
}

// fenceStopped takes the stopped nodes out of the partitions created since
// they stopped (a new topic is placed on every node): they leave the ISR
// and lead nothing, as on a Kafka cluster where they are fenced.
func (s *Server) fenceStopped() {
	for _, v := range s.vnodes {
		if v.up.Load() {
			continue
		}
		ctx, cancel := context.WithTimeout(s.ctx, 10*time.Second)
		if _, err := s.meta.NodeDown(ctx, v.id); err != nil && s.ctx.Err() == nil {
			s.logger.Warn("fence stopped node in new partitions", "stopped_node", v.id, "err", err)
		}
		cancel()
	}
}

// fencedBrokers adds the stopped nodes to a DescribeCluster answer, fenced,
// in node id order, as Kafka lists fenced brokers when asked to.
func (r *request) fencedBrokers(brokers []kmsg.DescribeClusterResponseBroker) []kmsg.DescribeClusterResponseBroker {
	for _, v := range r.s.vnodes {
		if v.up.Load() {
			continue
		}
		host, port, rack, ok := r.leaderEndpoint(v.id)
		if !ok {
			continue
		}
		b := kmsg.NewDescribeClusterResponseBroker()
		b.NodeID, b.Host, b.Port, b.Rack, b.IsFenced = v.id, host, port, rack, true
		i := len(brokers)
		for i > 0 && brokers[i-1].NodeID > v.id {
			i--
		}
		brokers = slices.Insert(brokers, i, b)
	}
	return brokers
}
