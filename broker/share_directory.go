package broker

import (
	"github.com/twmb/franz-go/pkg/kerr"

	"sharq/group"
	"sharq/share"
)

// shareDirectory lets ListGroups, DescribeGroups and DeleteGroups see share
// groups (the groupDirectory of coordinators.go).
type shareDirectory struct{ m *share.Manager }

func (d shareDirectory) ListGroups() []group.Overview {
	var out []group.Overview
	d.m.WithCoordinator(func(c *share.Coordinator) {
		for _, id := range c.GroupIDs() {
			out = append(out, group.Overview{ID: id, ProtocolType: "share", State: c.Group(id).State(), Type: "share"})
		}
	})
	return out
}

func (d shareDirectory) Owns(id string) bool {
	var owns bool
	d.m.WithCoordinator(func(c *share.Coordinator) { owns = c.Group(id) != nil })
	return owns
}

// DeleteGroup deletes an empty share group and its share-partition state.
func (d shareDirectory) DeleteGroup(id string) error { return d.m.DeleteGroup(id) }

func (d shareDirectory) ErrorCode(err error) int16 {
	if code := share.ErrorCode(err); code != kerr.UnknownServerError.Code {
		return code
	}
	return errKafkaStorage
}
