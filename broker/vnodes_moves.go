package broker

// Moves and outages of virtual brokers, for in-process tests (these
// methods) and the control API (control_nodes.go): stop and start a node,
// move a partition's leader, move a coordinator. The placement rules are
// raftmeta's (vnodes.go there); this file closes and reopens the listeners
// and connections.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"

	"sharq/raftmeta"
)

// NodeStatus is one node id this process serves.
type NodeStatus struct {
	NodeID    int32    `json:"node_id"`
	Up        bool     `json:"up"`
	Listeners []string `json:"listeners"`
	// Leaders is how many partitions (internal topics included) it leads.
	Leaders int `json:"leaders"`
}

// Nodes lists the node ids this process serves.
func (s *Server) Nodes() []NodeStatus {
	img := s.meta.Image()
	s.vmu.Lock()
	defer s.vmu.Unlock()
	out := make([]NodeStatus, 0, len(s.vnodes))
	for i, v := range s.vnodes {
		st := NodeStatus{NodeID: v.id, Up: v.up.Load(), Listeners: []string{}}
		adv := v.advertised
		if i == 0 && adv == nil {
			adv = s.advertised
		}
		for _, a := range adv {
			st.Listeners = append(st.Listeners, a.String())
		}
		for _, t := range img.Topics {
			for _, p := range t.Partitions {
				if p.Leader == v.id {
					st.Leaders++
				}
			}
		}
		out = append(out, st)
	}
	return out
}

// NodeError is a refused move: Code is the Kafka error code that fits
// (0 if none), NotFound an unknown node, topic or partition, BadRequest an
// argument that can never be right.
type NodeError struct {
	Code       int16
	NotFound   bool
	BadRequest bool
	Msg        string
}

func (e *NodeError) Error() string { return e.Msg }

func nodeErr(notFound bool, format string, args ...any) error {
	return &NodeError{NotFound: notFound, Msg: fmt.Sprintf(format, args...)}
}

// StopNode takes node id down as a 3-node Kafka loses a broker: its
// leaderships (coordinators included) move to the first in-sync replica
// with a leader epoch bump, it leaves every ISR, its listeners close and
// its open connections drop. The last node that is up cannot be stopped.
func (s *Server) StopNode(ctx context.Context, id int32) ([]raftmeta.LeaderChange, error) {
	s.vmu.Lock()
	defer s.vmu.Unlock()
	v := s.vnode(id)
	if v == nil {
		return nil, nodeErr(true, "node %d is not served here (nodes %d-%d)", id, s.cfg.NodeID, s.cfg.NodeID+int32(len(s.vnodes))-1)
	}
	if !v.up.Load() {
		return nil, nil
	}
	up := 0
	for _, o := range s.vnodes {
		if o.up.Load() {
			up++
		}
	}
	if up <= 1 {
		return nil, &NodeError{Msg: fmt.Sprintf("node %d: %v", id, errLastNode)}
	}
	// Leadership first, so a client that reconnects elsewhere finds the
	// new leaders at once (Kafka's controlled shutdown does the same).
	moved, err := s.meta.NodeDown(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("stop node %d: %w", id, err)
	}
	v.up.Store(false)
	for _, ln := range v.listeners {
		ln.Close()
	}
	v.listeners = nil
	s.connsMu.Lock()
	var drop []*conn
	for c := range s.conns {
		if c.node == id {
			drop = append(drop, c)
		}
	}
	s.connsMu.Unlock()
	for _, c := range drop {
		c.close()
	}
	for _, m := range moved {
		s.shareLeaderChanged(m.Topic, m.Partition)
	}
	s.vmoves[moveNodeStop].Add(1)
	s.logger.Info("virtual broker stopped", "stopped_node", id, "leaders_moved", len(moved))
	return moved, nil
}

// StartNode brings a stopped node id back on the ports it had: it
// rejoins every ISR; leadership stays where it moved (as on Kafka until a
// preferred leader election; MoveLeader or ElectLeaders moves it back).
func (s *Server) StartNode(ctx context.Context, id int32) error {
	s.vmu.Lock()
	defer s.vmu.Unlock()
	v := s.vnode(id)
	if v == nil {
		return nodeErr(true, "node %d is not served here (nodes %d-%d)", id, s.cfg.NodeID, s.cfg.NodeID+int32(len(s.vnodes))-1)
	}
	if v.up.Load() {
		return nil
	}
	if s.ctx.Err() != nil {
		return errors.New("the broker is shutting down")
	}
	var lns []net.Listener
	for j, l := range s.cfg.Listeners {
		port := v.boundPort(j)
		addr := net.JoinHostPort(l.Host, strconv.Itoa(port))
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			for _, o := range lns {
				o.Close()
			}
			return fmt.Errorf("start node %d: listen %s://%s: %w", id, l.Name, addr, err)
		}
		lns = append(lns, ln)
	}
	// Up before it rejoins the ISR, so that a topic created meanwhile
	// does not fence it again (fenceStopped).
	v.up.Store(true)
	if err := s.meta.NodeUp(ctx, id); err != nil {
		v.up.Store(false)
		for _, o := range lns {
			o.Close()
		}
		return fmt.Errorf("start node %d: %w", id, err)
	}
	v.listeners = lns
	s.acceptVirtual(v)
	s.vmoves[moveNodeStart].Add(1)
	s.logger.Info("virtual broker started", "started_node", id)
	return nil
}

// boundPort is the port listener j of the node was bound to.
func (v *vnode) boundPort(j int) int {
	if j < len(v.bound) {
		return v.bound[j]
	}
	return 0
}

// MoveLeader makes node the leader of topic's partition (it must be up).
// It reports whether the leader changed.
func (s *Server) MoveLeader(ctx context.Context, topic string, partition, node int32) (bool, error) {
	if !s.nodeUp(node) {
		return false, nodeErr(s.vnode(node) == nil, "node %d is not up here", node)
	}
	moved, err := s.meta.MoveLeader(ctx, topic, partition, node)
	var pe *raftmeta.PartitionError
	if errors.As(err, &pe) {
		return false, &NodeError{Code: pe.Code, NotFound: pe.Code == errUnknownTopicOrPartition, Msg: pe.Msg}
	}
	if moved {
		s.vmoves[moveLeader].Add(1)
		s.shareLeaderChanged(topic, partition)
		s.logger.Info("leader moved", "topic", topic, "partition", partition, "leader", node)
	}
	return moved, err
}

// placementChanged follows an election or a reassignment on virtual
// brokers: a stopped node they put back in an ISR (or made leader) is
// fenced again, and the share groups of every partition whose leader
// changed since before lose their acquisitions, as on any leader move.
func (s *Server) placementChanged(before *raftmeta.Image) {
	s.fenceStopped()
	after := s.meta.Image()
	for name, t := range after.Topics {
		old := before.Topics[name]
		if old == nil || old.ID != t.ID {
			continue
		}
		for i, p := range t.Partitions {
			if i < len(old.Partitions) && old.Partitions[i].Leader != p.Leader {
				s.shareLeaderChanged(name, int32(i))
			}
		}
	}
}

// shareLeaderChanged tells the share groups reading a partition that its
// leader changed: their acquisitions in flight are lost, as on Kafka
// (share.Manager.LeaderChanged).
func (s *Server) shareLeaderChanged(topic string, partition int32) {
	select {
	case <-s.coordReady:
	default:
		return // nothing is acquired before the share groups load
	}
	t := s.meta.Image().Topics[topic]
	if s.coordErr != nil || s.share == nil || t == nil || isInternalTopic(topic) {
		return
	}
	n, err := s.share.LeaderChanged([16]byte(t.ID), partition)
	if err != nil {
		s.logger.Warn("share-partitions after a leader change", "topic", topic, "partition", partition, "err", err)
	}
	if n > 0 {
		s.logger.Info("leader change released acquired records", "topic", topic, "partition", partition, "records", n)
	}
}

// CoordinatorKind names a coordinator for MoveCoordinator: "group" (classic
// and consumer groups), "share" (share groups: their coordinator is the
// group coordinator, as on Kafka) or "txn" (transactional ids).
type CoordinatorKind string

// CoordinatorMove says where a key's coordinator is.
type CoordinatorMove struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Node      int32  `json:"node"`
	Moved     bool   `json:"moved"`
}

// MoveCoordinator moves the coordinator of key to node: the leader of the
// key's partition of __consumer_offsets (group, share) or
// __transaction_state (txn), as Kafka's coordinators follow those leaders.
// Every key of that partition moves with it.
func (s *Server) MoveCoordinator(ctx context.Context, kind CoordinatorKind, key string, node int32) (CoordinatorMove, error) {
	var topic coordinatorTopic
	switch kind {
	case "group", "share":
		topic = groupCoordinator
	case "txn":
		topic = txnCoordinator
	default:
		return CoordinatorMove{}, &NodeError{BadRequest: true, Msg: fmt.Sprintf("coordinator kind %q: want group, txn or share", kind)}
	}
	if key == "" {
		return CoordinatorMove{}, &NodeError{BadRequest: true, Msg: "an empty key"}
	}
	if err := s.ensureInternalTopic(ctx, string(topic)); err != nil {
		return CoordinatorMove{}, err
	}
	_, p := s.coordinatorOf(topic, key)
	moved, err := s.MoveLeader(ctx, string(topic), p, node)
	if err != nil {
		return CoordinatorMove{}, err
	}
	if moved {
		s.vmoves[moveCoordinator].Add(1)
	}
	return CoordinatorMove{Topic: string(topic), Partition: p, Node: node, Moved: moved}, nil
}

// CoordinatorOf says which node coordinates key (kind as MoveCoordinator).
func (s *Server) CoordinatorOf(kind CoordinatorKind, key string) int32 {
	topic := groupCoordinator
	if kind == "txn" {
		topic = txnCoordinator
	}
	n, _ := s.coordinatorOf(topic, key)
	return n
}

// NodeIDs are the node ids this process serves, in order.
func (s *Server) NodeIDs() []int32 {
	ids := make([]int32, len(s.vnodes))
	for i, v := range s.vnodes {
		ids[i] = v.id
	}
	return slices.Clip(ids)
}

// moveKind names a counted move or outage (sharq_virtual_broker_moves_total).
type moveKind int

const (
	moveNodeStop moveKind = iota
	moveNodeStart
	moveLeader // coordinator moves are leader moves too, counted in both
	moveCoordinator
	numMoveKinds
)

var moveKindNames = [numMoveKinds]string{"node_stop", "node_start", "leader", "coordinator"}

var (
	descVirtualUp = newDesc("sharq_virtual_broker_up",
		"Whether each node id of sharq.virtual.brokers accepts connections (1) or is stopped (0).", kindGauge, "node")
	descVirtualMoves = newDesc("sharq_virtual_broker_moves_total",
		"Virtual brokers' moves and outages done through the control API or the Go API, by kind: node_stop, node_start, leader (every leader move, a coordinator's included), coordinator.", kindCounter, "kind")
)

// collectVirtualNodes exposes the virtual nodes (none with one node).
func collectVirtualNodes(s *Server, e *expo) {
	if !s.virtual {
		return
	}
	for _, v := range s.vnodes {
		up := 0.0
		if v.up.Load() {
			up = 1
		}
		e.add(descVirtualUp, up, strconv.Itoa(int(v.id)))
	}
	for k := range numMoveKinds {
		e.add(descVirtualMoves, float64(s.vmoves[k].Load()), moveKindNames[k])
	}
}
