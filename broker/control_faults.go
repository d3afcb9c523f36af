package broker

// Fault rules through the control API (docs/faults.md):
//
//	POST   /api/v1/faults                 a rule (JSON) -> the rule with its id
//	GET    /api/v1/faults                 {"rules": [each rule with hits, matches, done]}
//	GET    /api/v1/faults/{id}            one rule with its counts
//	DELETE /api/v1/faults/{id}            remove it (204)
//	GET    /api/v1/faults/{id}/wait?hits=N&timeout_ms=T
//	                                      long poll until the rule has N hits
//	                                      (408 with the rule as it is when T passes)

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"sharq/broker/fault"
)

func init() {
	regControl("POST /api/v1/faults", controlFaultAdd)
	regControl("GET /api/v1/faults", controlFaultList)
	regControl("GET /api/v1/faults/{id}", controlFaultGet)
	regControl("DELETE /api/v1/faults/{id}", controlFaultRemove)
	regControl("GET /api/v1/faults/{id}/wait", controlFaultWait)
}

// Faults is the broker's fault rules, for Go tests that drive an
// in-process broker (the control API's routes call the same methods).
func (s *Server) Faults() *fault.Set { return s.faults.Set }

// ControlFaults is the answer of GET /api/v1/faults.
type ControlFaults struct {
	Rules []fault.Status `json:"rules"`
}

// defaultFaultWait is how long a wait without timeout_ms lasts: under
// sharq ctl's default HTTP timeout, so the answer says how far it got.
const defaultFaultWait = 25 * time.Second

func controlFaultAdd(s *Server, r *http.Request) (any, error) {
	var rule fault.Rule
	if err := decodeControlBody(r, &rule); err != nil {
		return nil, err
	}
	added, err := s.faults.Add(rule)
	if err != nil {
		return nil, controlErr(http.StatusBadRequest, errInvalidRequest, "fault rule: "+err.Error())
	}
	s.logger.Info("fault rule added", "rule", added.ID, "effect", added.Effect())
	return added, nil
}

func controlFaultList(s *Server, r *http.Request) (any, error) {
	return ControlFaults{Rules: s.faults.List()}, nil
}

func faultID(r *http.Request) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, controlErr(http.StatusBadRequest, errInvalidRequest, fmt.Sprintf("fault rule id %q is not a positive number", r.PathValue("id")))
	}
	return id, nil
}

func faultNotFound(id int64) error {
	return controlErr(http.StatusNotFound, 0, fmt.Sprintf("no fault rule %d", id))
}

func controlFaultGet(s *Server, r *http.Request) (any, error) {
	id, err := faultID(r)
	if err != nil {
		return nil, err
	}
	st, err := s.faults.Get(id)
	if err != nil {
		return nil, faultNotFound(id)
	}
	return st, nil
}

func controlFaultRemove(s *Server, r *http.Request) (any, error) {
	id, err := faultID(r)
	if err != nil {
		return nil, err
	}
	if err := s.faults.Remove(id); err != nil {
		return nil, faultNotFound(id)
	}
	s.logger.Info("fault rule removed", "rule", id)
	return nil, nil
}

func controlFaultWait(s *Server, r *http.Request) (any, error) {
	id, err := faultID(r)
	if err != nil {
		return nil, err
	}
	q := r.URL.Query()
	hits, err := strconv.ParseInt(q.Get("hits"), 10, 64)
	if err != nil || hits < 1 {
		return nil, controlErr(http.StatusBadRequest, errInvalidRequest, fmt.Sprintf("hits %q: want a count of at least 1", q.Get("hits")))
	}
	wait := defaultFaultWait
	if v := q.Get("timeout_ms"); v != "" {
		ms, err := strconv.ParseInt(v, 10, 64)
		if err != nil || ms < 0 {
			return nil, controlErr(http.StatusBadRequest, errInvalidRequest, fmt.Sprintf("timeout_ms %q: want milliseconds", v))
		}
		wait = time.Duration(ms) * time.Millisecond
	}
	ctx, cancel := context.WithTimeout(r.Context(), wait)
	defer cancel()
	st, err := s.faults.Wait(ctx, id, hits)
	switch {
	case errors.Is(err, fault.ErrNotFound):
		return nil, faultNotFound(id)
	case err != nil:
		return nil, controlErr(http.StatusRequestTimeout, 0, fmt.Sprintf("fault rule %d has %d of %d hits after %v", id, st.Hits, hits, wait))
	}
	return st, nil
}
