package broker

import (
	"context"
	"crypto/subtle"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/broker/security"
	"sharq/raftmeta/clientmetrics"
)

// metrics are the broker's Prometheus metrics. Per-API series are atomic
// counters indexed by API key, so counting a request costs no allocation,
// no lock and no map lookup; per-partition, group and share gauges are read
// from their owners at scrape time, so the hot path pays nothing for them.
type metrics struct {
	s           *Server
	known       [maxAPIKey + 1]bool
	requests    [maxAPIKey + 1]atomic.Uint64
	errors      [maxAPIKey + 1]atomic.Uint64
	latency     [maxAPIKey + 1]latencyHist
	bytesIn     atomic.Uint64
	bytesOut    atomic.Uint64
	connections atomic.Int64
	throttleNS  atomic.Uint64
}

var (
	descRequests = newDesc("sharq_requests_total", "Kafka requests handled, by API.", kindCounter, "api")
	descClosed   = newDesc("sharq_request_errors_total", "Requests that closed their connection (malformed or unsupported), by API.", kindCounter, "api")
	descLatency  = newDesc("sharq_request_duration_seconds",
		"Time from a request's arrival to its response being written, by API (long-polls included).", kindHistogram, "api")
	descBytesIn     = newDesc("sharq_request_bytes_total", "Bytes of Kafka request frames received.", kindCounter)
	descBytesOut    = newDesc("sharq_response_bytes_total", "Bytes of Kafka response frames sent.", kindCounter)
	descConnections = newDesc("sharq_connections", "Open client connections.", kindGauge)
	descThrottle    = newDesc("sharq_quota_throttle_seconds_total", "Time connections were muted for exceeding a client quota.", kindCounter)
	descInFlight    = newDesc("sharq_request_bytes_in_flight",
		"Bytes of request frames being read or handled, bounded by queued.max.request.bytes.", kindGauge)
	descWaiting = newDesc("sharq_request_bytes_waiting_connections",
		"Connections not being read because queued.max.request.bytes is reached.", kindGauge)
	descPeak = newDesc("sharq_request_bytes_in_flight_peak",
		"Highest sharq_request_bytes_in_flight since start.", kindGauge)
	descWaits = newDesc("sharq_request_bytes_waits_total",
		"Request frames whose body had to wait for room under queued.max.request.bytes.", kindCounter)
	descPanics = newDesc("sharq_panics_recovered_total",
		"Panics recovered while serving a connection (each closed it); anything but 0 is a bug to report.", kindCounter)
)

func newMetrics(s *Server) *metrics {
	m := &metrics{s: s}
	for _, e := range registeredAPIs() {
		m.known[e.key] = true
	}
	return m
}

// observe records one handled request.
func (m *metrics) observe(key int16, start time.Time, in, out int) {
	if key < 0 || key > maxAPIKey || !m.known[key] {
		return
	}
	m.requests[key].Add(1)
	m.latency[key].observe(time.Since(start))
	m.bytesIn.Add(uint64(in))
	m.bytesOut.Add(uint64(out))
}

func (m *metrics) throttled(d time.Duration) {
	if d > 0 {
		m.throttleNS.Add(uint64(d))
	}
}

func (m *metrics) failed(key int16) {
	if key >= 0 && key <= maxAPIKey && m.known[key] {
		m.errors[key].Add(1)
	}
}

// page gathers one scrape.
func (m *metrics) page() []byte {
	e := newExpo()
	for key := range m.known {
		if m.known[key] {
			e.add(descRequests, float64(m.requests[key].Load()), kmsg.NameForKey(int16(key)))
		}
	}
	for key := range m.known {
		if m.known[key] {
			e.add(descClosed, float64(m.errors[key].Load()), kmsg.NameForKey(int16(key)))
		}
	}
	for key := range m.known {
		if m.known[key] {
			counts, sum := m.latency[key].snapshot()
			e.histogram(descLatency, latencyBounds[:], counts, sum, kmsg.NameForKey(int16(key)))
		}
	}
	e.add(descBytesIn, float64(m.bytesIn.Load()))
	e.add(descBytesOut, float64(m.bytesOut.Load()))
	e.add(descConnections, float64(m.connections.Load()))
	e.add(descThrottle, float64(m.throttleNS.Load())/1e9)
	rb := m.s.reqBytes.stats()
	e.add(descInFlight, float64(rb.InFlight))
	e.add(descWaiting, float64(rb.Waiting))
	e.add(descPeak, float64(rb.Peak))
	e.add(descWaits, float64(rb.Waited))
	e.add(descPanics, float64(m.s.panics.Load()))
	collectPartitions(m.s, e)
	collectShare(m.s, e)
	collectGroups(m.s, e)
	collectClientMetrics(m.s, e)
	collectFaults(m.s, e)
	collectVirtualNodes(m.s, e)
	collectRuntime(e)
	return e.bytes()
}

var (
	descLogEnd = newDesc("sharq_partition_log_end_offset",
		"Log end offset of a partition.", kindGauge, "topic", "partition")
	descLogStart = newDesc("sharq_partition_log_start_offset",
		"Log start offset of a partition.", kindGauge, "topic", "partition")
	descHighWatermark = newDesc("sharq_partition_high_watermark",
		"High watermark of a partition: what consumers can read.", kindGauge, "topic", "partition")
	descLogSize = newDesc("sharq_partition_log_size_bytes",
		"Bytes on disk of a partition's segments.", kindGauge, "topic", "partition")
	descOffline = newDesc("sharq_partition_offline",
		"1 for a partition whose log cannot be served (corrupt, unreadable or failed on write): it answers KAFKA_STORAGE_ERROR.", kindGauge, "topic", "partition")
	descOpenLogs = newDesc("sharq_partition_logs_open",
		"Partition logs open now (opened on first use, the least recently used closed past the bound).", kindGauge)
	descOfflineCount = newDesc("sharq_offline_partitions",
		"Partitions this node leads whose log cannot be served (Kafka's OfflinePartitionsCount for this node).", kindGauge)
)

// collectPartitions reads partition gauges from the open logs.
func collectPartitions(s *Server, e *expo) {
	s.partsMu.RLock()
	defer s.partsMu.RUnlock()
	e.add(descOpenLogs, float64(s.logs.OpenLogs()))
	offline := 0
	for name, tp := range s.topics {
		for _, p := range tp.parts {
			if p == nil {
				continue
			}
			name, idx := labelValue(name), strconv.Itoa(int(p.index))
			if p.h.Offline() != nil {
				offline++
				e.add(descOffline, 1, name, idx)
			}
			st, ok := p.stats()
			if !ok {
				continue // not loaded since start: nothing to report yet
			}
			e.add(descLogEnd, float64(st.LogEndOffset), name, idx)
			e.add(descLogStart, float64(st.LogStartOffset), name, idx)
			e.add(descHighWatermark, float64(st.HighWatermark), name, idx)
			e.add(descLogSize, float64(st.Size), name, idx)
		}
	}
	e.add(descOfflineCount, float64(offline))
}

var (
	descClientMetric = newDesc("sharq_client_metric",
		"A metric a client pushed (KIP-714 PushTelemetry) under a client-metrics subscription: name is the OpenTelemetry metric name, attributes its data point and resource attributes (k=v,...). Gauges and cumulative sums hold the last value, delta sums the running total. Gone when the client disconnects or stops pushing.",
		kindUntyped, "client_instance_id", "client_id", "name", "attributes")
	descClientInstances = newDesc("sharq_client_metrics_instances",
		"Client instances known to client metrics (KIP-714): clients that asked for telemetry subscriptions and are still connected.", kindGauge)
	descClientSeriesDropped = newDesc("sharq_client_metric_series_dropped_total",
		"Pushed data points dropped because a client instance had 2000 series, or all together 100000.", kindCounter)
)

// collectClientMetrics exposes what clients pushed (PushTelemetry).
func collectClientMetrics(s *Server, e *expo) {
	st := s.clientMetrics.Collect(time.Now(), func(sm clientmetrics.Sample) {
		e.add(descClientMetric, sm.Value, sm.InstanceID, labelValue(sm.ClientID), labelValue(sm.Name), labelValue(sm.Attrs))
	})
	e.add(descClientInstances, float64(st.Instances))
	e.add(descClientSeriesDropped, float64(st.Dropped))
}

// labelValue makes a client-chosen name (a group id, which Kafka accepts as
// any bytes) a valid Prometheus label value. A name that is not valid UTF-8
// is shown Go-quoted ("\xff..."), and so is a valid one that starts with a
// quote, so that two names never share a series (a duplicate series fails
// the whole scrape). Every other name, all of them in practice, is returned
// as it is, without an allocation.
func labelValue(s string) string {
	if utf8.ValidString(s) && !strings.HasPrefix(s, `"`) {
		return s
	}
	return strconv.Quote(s)
}

// adminHandler serves /metrics, /healthz (the process is up) and /readyz
// (listeners accepting and metadata loaded).
func (s *Server) adminHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		w.Write(s.metrics.page())
	})
	s.registerUI(mux)      // /ui and /ui/state: ui.go
	s.registerControl(mux) // /api/v1/...: control.go
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) {
		if !s.ready.Load() || !s.coordinatorsLoaded() {
			http.Error(w, "not ready", http.StatusServiceUnavailable)
			return
		}
		// Offline partitions do not make the node unready: it serves every
		// other partition, as a Kafka broker with an offline log dir does.
		fmt.Fprintln(w, "ready")
		for _, op := range s.offlinePartitions() {
			fmt.Fprintf(w, "offline partition %s-%d: %v\n", op.Topic, op.Partition, op.Err)
		}
	})
	user, pass := s.cfg.MetricsBasicAuth()
	// /healthz and /readyz stay open: orchestrators probe them without
	// credentials, and they reveal nothing.
	probe := func(r *http.Request) bool { return r.URL.Path == "/healthz" || r.URL.Path == "/readyz" }
	if user == "" {
		// Without credentials to check, the pages that name topics,
		// groups and offsets (/metrics, /ui) and the control API are
		// served only to peers on this host, whatever address the
		// listener binds: nothing is open to the network by default.
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !probe(r) && !isLoopbackAddr(r.RemoteAddr) {
				http.Error(w, "metrics.listener serves loopback clients only unless sharq.metrics.basic.auth.user is set", http.StatusForbidden)
				return
			}
			mux.ServeHTTP(w, r)
		})
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !probe(r) {
			u, p, ok := r.BasicAuth()
			if !ok || subtle.ConstantTimeCompare([]byte(u), []byte(user)) != 1 || subtle.ConstantTimeCompare([]byte(p), []byte(pass)) != 1 {
				w.Header().Set("WWW-Authenticate", `Basic realm="sharq"`)
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
		}
		mux.ServeHTTP(w, r)
	})
}

// startAdmin binds metrics.listener when it is set.
func (s *Server) startAdmin() error {
	addr := s.cfg.MetricsListener
	if addr == "" {
		return nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen metrics.listener %s: %w", addr, err)
	}
	if sec, on := s.cfg.MetricsSecurity(); on {
		tc, err := security.ServerTLS(sec)
		if err != nil {
			ln.Close()
			return fmt.Errorf("metrics.listener TLS: %w", err)
		}
		ln = tls.NewListener(ln, tc)
	}
	if user, _ := s.cfg.MetricsBasicAuth(); user == "" && !isLoopbackAddr(ln.Addr().String()) {
		s.logger.Warn("metrics.listener binds a non-loopback address without sharq.metrics.basic.auth.user: /metrics, /ui and the control API answer loopback clients only", "addr", ln.Addr().String())
	}
	s.adminAddr = ln.Addr().String()
	s.admin = &http.Server{Handler: s.adminHandler(), ReadHeaderTimeout: 10 * time.Second}
	s.bgWG.Add(1)
	go func() {
		defer s.bgWG.Done()
		if err := s.admin.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.logger.Error("metrics listener stopped", "err", err)
		}
	}()
	return nil
}

// AdminAddr is the bound metrics listener address ("" when off).
func (s *Server) AdminAddr() string { return s.adminAddr }

func (s *Server) stopAdmin(ctx context.Context) {
	if s.admin != nil {
		s.admin.Shutdown(ctx)
	}
}
