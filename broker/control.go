package broker

// The control API: HTTP/JSON under /api/v1/ on metrics.listener, for CI
// suites and `sharq ctl` to rehearse failures (virtual brokers, moves,
// faults) and run share-group tasks (DLQ redrive). Each area registers its
// routes from init() in its own control_*.go file with regControl, as the
// Kafka APIs register with regKey, so this file is the only place that
// decides how a control request is authorized and answered.
//
// Who may call it: the metrics listener's basic auth applies to every route
// (adminHandler). Without basic auth the control routes are served only to
// loopback peers: a control route changes the broker, so it is never open
// by default to other hosts, whatever address the listener binds.
//
// Answers are JSON. A failure is {"error_code": N, "message": "..."} with
// an HTTP status that says the class (400 bad request, 404 no such thing,
// 409 conflict, 403 refused, 500 broker failure); N is a Kafka error code
// where one fits, else 0.

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
)

// ControlPrefix is where the control routes live.
const ControlPrefix = "/api/v1/"

// controlHandler serves one control route. It returns the value to answer
// with status 200 (nil: 204), or an error: a *ControlError keeps its status,
// anything else is a 500.
type controlHandler func(s *Server, r *http.Request) (any, error)

type controlRoute struct {
	pattern string // a net/http ServeMux pattern, e.g. "POST /api/v1/nodes/{id}/stop"
	handle  controlHandler
}

var controlRoutes []controlRoute

// regControl registers a control route; called from init(). The pattern
// must start with its method and ControlPrefix.
func regControl(pattern string, h controlHandler) {
	method, path, ok := strings.Cut(pattern, " ")
	if !ok || method == "" || !strings.HasPrefix(path, ControlPrefix) {
		panic("broker: control route " + pattern + " needs a method and the " + ControlPrefix + " prefix")
	}
	controlRoutes = append(controlRoutes, controlRoute{pattern: pattern, handle: h})
}

// ControlError is a control request's failure as the API answers it.
type ControlError struct {
	Status    int    `json:"-"`
	ErrorCode int16  `json:"error_code"`
	Message   string `json:"message"`
}

func (e *ControlError) Error() string { return e.Message }

// controlErr makes a ControlError.
func controlErr(status int, code int16, msg string) *ControlError {
	return &ControlError{Status: status, ErrorCode: code, Message: msg}
}

// maxControlBody bounds a control request's body: rules and task
// descriptions are small.
const maxControlBody = 1 << 20

// decodeControlBody reads a JSON body into v, refusing unknown fields so a
// misspelt rule field is an error rather than ignored.
func decodeControlBody(r *http.Request, v any) error {
	dec := json.NewDecoder(io.LimitReader(r.Body, maxControlBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return controlErr(http.StatusBadRequest, 0, "request body: "+err.Error())
	}
	return nil
}

// registerControl mounts every control route on mux.
func (s *Server) registerControl(mux *http.ServeMux) {
	for _, rt := range controlRoutes {
		h := rt.handle
		mux.HandleFunc(rt.pattern, func(w http.ResponseWriter, r *http.Request) {
			if !s.controlAllowed(r) {
				writeControl(w, http.StatusForbidden, &ControlError{Message: "the control API is served to loopback clients only unless sharq.metrics.basic.auth.user is set"})
				return
			}
			v, err := h(s, r)
			if err != nil {
				ce, ok := err.(*ControlError)
				if !ok {
					ce = &ControlError{Status: http.StatusInternalServerError, Message: err.Error()}
				}
				s.logger.Info("control request refused", "route", r.Pattern, "status", ce.Status, "err", ce.Message)
				writeControl(w, ce.Status, ce)
				return
			}
			if v == nil {
				w.WriteHeader(http.StatusNoContent)
				return
			}
			writeControl(w, http.StatusOK, v)
		})
	}
}

// controlAllowed: with basic auth configured adminHandler has already
// checked the caller; without it only a peer on this host (loopback) may
// change the broker.
func (s *Server) controlAllowed(r *http.Request) bool {
	if user, _ := s.cfg.MetricsBasicAuth(); user != "" {
		return true
	}
	return isLoopbackAddr(r.RemoteAddr)
}

func isLoopbackAddr(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback() || host == "localhost"
}

func writeControl(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}
