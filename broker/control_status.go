package broker

// GET /api/v1/status: who this broker is, so a CI step can check it reached
// the broker it meant and that it serves.

import (
	"net/http"
	"runtime/debug"
)

// ControlStatus is the answer of GET /api/v1/status.
type ControlStatus struct {
	NodeID    int32    `json:"node_id"`
	ClusterID string   `json:"cluster_id"`
	Ready     bool     `json:"ready"`
	Listeners []string `json:"listeners"`
	Version   string   `json:"version"`
}

func init() { regControl("GET /api/v1/status", controlStatus) }

func controlStatus(s *Server, r *http.Request) (any, error) {
	st := ControlStatus{NodeID: s.cfg.NodeID, ClusterID: s.meta.Image().ClusterID, Ready: s.ready.Load() && s.coordinatorsLoaded(), Listeners: []string{}}
	for _, a := range s.advertised {
		st.Listeners = append(st.Listeners, a.String())
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		st.Version = bi.Main.Version
	}
	return st, nil
}
