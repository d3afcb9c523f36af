package broker

// Virtual brokers' moves and outages on the control API
// (docs/virtual-brokers.md):
//
//	GET  /api/v1/nodes                       the node ids, up or not, listeners, leaderships
//	POST /api/v1/nodes/{id}/stop             StopNode: leaders moved, listeners closed
//	POST /api/v1/nodes/{id}/start            StartNode: listeners reopened, ISR rejoined
//	POST /api/v1/leaders/move                {"topic","partition","node"}: MoveLeader
//	POST /api/v1/coordinators/move           {"kind":"group|txn|share","key","node"}: MoveCoordinator

import (
	"errors"
	"net/http"
	"strconv"

	"sharq/raftmeta"
)

func init() {
	regControl("GET /api/v1/nodes", controlNodes)
	regControl("POST /api/v1/nodes/{id}/stop", controlNodeStop)
	regControl("POST /api/v1/nodes/{id}/start", controlNodeStart)
	regControl("POST /api/v1/leaders/move", controlLeaderMove)
	regControl("POST /api/v1/coordinators/move", controlCoordinatorMove)
}

func controlNodes(s *Server, r *http.Request) (any, error) { return s.Nodes(), nil }

// ControlNodeChange is the answer of a node stop or start.
type ControlNodeChange struct {
	NodeID int32 `json:"node_id"`
	Up     bool  `json:"up"`
	// LeadersMoved are the partitions whose leader the stop moved.
	LeadersMoved []ControlLeader `json:"leaders_moved"`
}

// ControlLeader is a partition's leader after a move.
type ControlLeader struct {
	Topic       string `json:"topic"`
	Partition   int32  `json:"partition"`
	Leader      int32  `json:"leader"`
	LeaderEpoch int32  `json:"leader_epoch"`
	Moved       bool   `json:"moved"`
}

func pathNode(r *http.Request) (int32, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 32)
	if err != nil {
		return 0, controlErr(http.StatusBadRequest, 0, "node id "+strconv.Quote(r.PathValue("id"))+" is not a number")
	}
	return int32(id), nil
}

func controlNodeStop(s *Server, r *http.Request) (any, error) {
	id, err := pathNode(r)
	if err != nil {
		return nil, err
	}
	moved, err := s.StopNode(r.Context(), id)
	if err != nil {
		return nil, nodeControlErr(err)
	}
	out := ControlNodeChange{NodeID: id, LeadersMoved: []ControlLeader{}}
	for _, m := range moved {
		out.LeadersMoved = append(out.LeadersMoved, ControlLeader{Topic: m.Topic, Partition: m.Partition, Leader: m.To, LeaderEpoch: m.ToEpoch, Moved: true})
	}
	return out, nil
}

func controlNodeStart(s *Server, r *http.Request) (any, error) {
	id, err := pathNode(r)
	if err != nil {
		return nil, err
	}
	if err := s.StartNode(r.Context(), id); err != nil {
		return nil, nodeControlErr(err)
	}
	return ControlNodeChange{NodeID: id, Up: true, LeadersMoved: []ControlLeader{}}, nil
}

// ControlLeaderMove is the body of POST /api/v1/leaders/move.
type ControlLeaderMove struct {
	Topic     string `json:"topic"`
	Partition *int32 `json:"partition"`
	Node      *int32 `json:"node"`
}

func controlLeaderMove(s *Server, r *http.Request) (any, error) {
	var body ControlLeaderMove
	if err := decodeControlBody(r, &body); err != nil {
		return nil, err
	}
	if body.Topic == "" || body.Partition == nil || body.Node == nil {
		return nil, controlErr(http.StatusBadRequest, 0, `want {"topic": NAME, "partition": N, "node": ID}`)
	}
	moved, err := s.MoveLeader(r.Context(), body.Topic, *body.Partition, *body.Node)
	if err != nil {
		return nil, nodeControlErr(err)
	}
	return s.controlLeader(body.Topic, *body.Partition, moved), nil
}

func (s *Server) controlLeader(topic string, partition int32, moved bool) ControlLeader {
	out := ControlLeader{Topic: topic, Partition: partition, Moved: moved, Leader: -1, LeaderEpoch: -1}
	if t := s.meta.Image().Topics[topic]; t != nil && int(partition) < len(t.Partitions) {
		out.Leader, out.LeaderEpoch = t.Partitions[partition].Leader, t.Partitions[partition].LeaderEpoch
	}
	return out
}

// ControlCoordinatorMove is the body of POST /api/v1/coordinators/move.
type ControlCoordinatorMove struct {
	Kind string `json:"kind"`
	Key  string `json:"key"`
	Node *int32 `json:"node"`
}

func controlCoordinatorMove(s *Server, r *http.Request) (any, error) {
	var body ControlCoordinatorMove
	if err := decodeControlBody(r, &body); err != nil {
		return nil, err
	}
	if body.Node == nil {
		return nil, controlErr(http.StatusBadRequest, 0, `want {"kind": "group"|"txn"|"share", "key": KEY, "node": ID}`)
	}
	m, err := s.MoveCoordinator(r.Context(), CoordinatorKind(body.Kind), body.Key, *body.Node)
	if err != nil {
		return nil, nodeControlErr(err)
	}
	return s.controlLeader(m.Topic, m.Partition, m.Moved), nil
}

// nodeControlErr gives a move's refusal its HTTP status: 404 for an
// unknown node, topic or partition, 409 for a move the state refuses, 400
// for a bad argument; anything else is the broker's failure (500).
func nodeControlErr(err error) error {
	var ne *NodeError
	if errors.As(err, &ne) {
		switch {
		case ne.NotFound:
			return controlErr(http.StatusNotFound, ne.Code, ne.Msg)
		case ne.BadRequest:
			return controlErr(http.StatusBadRequest, ne.Code, ne.Msg)
		}
		return controlErr(http.StatusConflict, ne.Code, ne.Msg)
	}
	var pe *raftmeta.PartitionError
	if errors.As(err, &pe) {
		return controlErr(http.StatusConflict, pe.Code, pe.Msg)
	}
	return err
}
