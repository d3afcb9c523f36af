package broker

import (
	"sharq/group"
	"sharq/share"
)

// shareDirectory lets ListGroups, DescribeGroups and DeleteGroups see share
// groups (the groupDirectory of coordinators.go).
type shareDirectory struct{ st *shareState }

func (d shareDirectory) ListGroups() []group.Overview {
	d.st.mu.Lock()
	defer d.st.mu.Unlock()
	var out []group.Overview
	for _, id := range d.st.coord.GroupIDs() {
		g := d.st.coord.Group(id)
		out = append(out, group.Overview{ID: id, ProtocolType: "share", State: g.State(), Type: "share"})
	}
	return out
}

func (d shareDirectory) Owns(id string) bool {
	d.st.mu.Lock()
	defer d.st.mu.Unlock()
	return d.st.coord.Group(id) != nil
}

// DeleteGroup deletes an empty share group and its share-partition state.
func (d shareDirectory) DeleteGroup(id string) error {
	st := d.st
	st.mu.Lock()
	if err := st.coord.DeleteGroup(id); err != nil {
		st.mu.Unlock()
		return err
	}
	var keys []sharePartKey
	for k := range st.parts {
		if k.group == id {
			keys = append(keys, k)
		}
	}
	st.mu.Unlock()
	for _, k := range keys {
		st.deleteState(k)
	}
	return st.persister.DeleteGroup(id)
}

func (d shareDirectory) ErrorCode(err error) int16 {
	if code := share.GroupErrorCode(err); code != -1 {
		return code
	}
	return errKafkaStorage
}
