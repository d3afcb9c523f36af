package broker

import (
	"context"
	"crypto/subtle"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/broker/security"
	"sharq/raftmeta/clientmetrics"
)

// metrics are the broker's Prometheus metrics. Per-API series are resolved
// once at start-up so that counting a request costs no allocation and no map
// lookup; per-partition gauges are read from the logs at scrape time, so
// the hot path pays nothing for them.
type metrics struct {
	reg         *prometheus.Registry
	requests    [maxAPIKey + 1]prometheus.Counter
	errors      [maxAPIKey + 1]prometheus.Counter
	latency     [maxAPIKey + 1]prometheus.Observer
	bytesIn     prometheus.Counter
	bytesOut    prometheus.Counter
	connections prometheus.Gauge
	throttle    prometheus.Counter
}

func newMetrics(s *Server) *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	requests := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "sharq_requests_total", Help: "Kafka requests handled, by API.",
	}, []string{"api"})
	closed := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "sharq_request_errors_total", Help: "Requests that closed their connection (malformed or unsupported), by API.",
	}, []string{"api"})
	latency := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "sharq_request_duration_seconds",
		Help:    "Time from a request's arrival to its response being written, by API (long-polls included).",
		Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
	}, []string{"api"})
	for _, e := range registeredAPIs() {
		name := kmsg.NameForKey(e.key)
		m.requests[e.key] = requests.WithLabelValues(name)
		m.errors[e.key] = closed.WithLabelValues(name)
		m.latency[e.key] = latency.WithLabelValues(name)
	}
	m.bytesIn = prometheus.NewCounter(prometheus.CounterOpts{Name: "sharq_request_bytes_total", Help: "Bytes of Kafka request frames received."})
	m.bytesOut = prometheus.NewCounter(prometheus.CounterOpts{Name: "sharq_response_bytes_total", Help: "Bytes of Kafka response frames sent."})
	m.throttle = prometheus.NewCounter(prometheus.CounterOpts{Name: "sharq_quota_throttle_seconds_total", Help: "Time connections were muted for exceeding a client quota."})
	m.connections = prometheus.NewGauge(prometheus.GaugeOpts{Name: "sharq_connections", Help: "Open client connections."})
	inFlight := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "sharq_request_bytes_in_flight",
		Help: "Bytes of request frames being read or handled, bounded by queued.max.request.bytes.",
	}, func() float64 { return float64(s.reqBytes.stats().InFlight) })
	waiting := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "sharq_request_bytes_waiting_connections",
		Help: "Connections not being read because queued.max.request.bytes is reached.",
	}, func() float64 { return float64(s.reqBytes.stats().Waiting) })
	peak := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "sharq_request_bytes_in_flight_peak",
		Help: "Highest sharq_request_bytes_in_flight since start.",
	}, func() float64 { return float64(s.reqBytes.stats().Peak) })
	waits := prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "sharq_request_bytes_waits_total",
		Help: "Request frames whose body had to wait for room under queued.max.request.bytes.",
	}, func() float64 { return float64(s.reqBytes.stats().Waited) })
	m.reg.MustRegister(requests, closed, latency, m.bytesIn, m.bytesOut, m.connections, m.throttle, inFlight, waiting, peak, waits,
		partitionCollector{s}, shareCollector{s}, groupCollector{s}, clientMetricsCollector{s}, s.faults.injected,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// observe records one handled request.
func (m *metrics) observe(key int16, start time.Time, in, out int) {
	if key < 0 || key > maxAPIKey || m.requests[key] == nil {
		return
	}
	m.requests[key].Inc()
	m.latency[key].Observe(time.Since(start).Seconds())
	m.bytesIn.Add(float64(in))
	m.bytesOut.Add(float64(out))
}

func (m *metrics) throttled(d time.Duration) { m.throttle.Add(d.Seconds()) }

func (m *metrics) failed(key int16) {
	if key >= 0 && key <= maxAPIKey && m.errors[key] != nil {
		m.errors[key].Inc()
	}
}

var (
	descLogEnd = prometheus.NewDesc("sharq_partition_log_end_offset",
		"Log end offset of a partition.", []string{"topic", "partition"}, nil)
	descLogStart = prometheus.NewDesc("sharq_partition_log_start_offset",
		"Log start offset of a partition.", []string{"topic", "partition"}, nil)
	descHighWatermark = prometheus.NewDesc("sharq_partition_high_watermark",
		"High watermark of a partition: what consumers can read.", []string{"topic", "partition"}, nil)
	descLogSize = prometheus.NewDesc("sharq_partition_log_size_bytes",
		"Bytes on disk of a partition's segments.", []string{"topic", "partition"}, nil)
	descOffline = prometheus.NewDesc("sharq_partition_offline",
		"1 for a partition whose log cannot be served (corrupt, unreadable or failed on write): it answers KAFKA_STORAGE_ERROR.", []string{"topic", "partition"}, nil)
	descOpenLogs = prometheus.NewDesc("sharq_partition_logs_open",
		"Partition logs open now (opened on first use, the least recently used closed past the bound).", nil, nil)
	descOfflineCount = prometheus.NewDesc("sharq_offline_partitions",
		"Partitions this node leads whose log cannot be served (Kafka's OfflinePartitionsCount for this node).", nil, nil)
)

// partitionCollector reads partition gauges from the open logs at scrape
// time.
type partitionCollector struct{ s *Server }

func (c partitionCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descLogEnd
	ch <- descLogStart
	ch <- descHighWatermark
	ch <- descLogSize
	ch <- descOffline
	ch <- descOfflineCount
	ch <- descOpenLogs
}

func (c partitionCollector) Collect(ch chan<- prometheus.Metric) {
	c.s.partsMu.RLock()
	defer c.s.partsMu.RUnlock()
	ch <- prometheus.MustNewConstMetric(descOpenLogs, prometheus.GaugeValue, float64(c.s.logs.OpenLogs()))
	offline := 0
	defer func() {
		ch <- prometheus.MustNewConstMetric(descOfflineCount, prometheus.GaugeValue, float64(offline))
	}()
	for name, tp := range c.s.topics {
		for _, p := range tp.parts {
			if p == nil {
				continue
			}
			name, idx := labelValue(name), strconv.Itoa(int(p.index))
			if p.h.Offline() != nil {
				offline++
				ch <- prometheus.MustNewConstMetric(descOffline, prometheus.GaugeValue, 1, name, idx)
			}
			st, ok := p.stats()
			if !ok {
				continue // not loaded since start: nothing to report yet
			}
			ch <- prometheus.MustNewConstMetric(descLogEnd, prometheus.GaugeValue, float64(st.LogEndOffset), name, idx)
			ch <- prometheus.MustNewConstMetric(descLogStart, prometheus.GaugeValue, float64(st.LogStartOffset), name, idx)
			ch <- prometheus.MustNewConstMetric(descHighWatermark, prometheus.GaugeValue, float64(st.HighWatermark), name, idx)
			ch <- prometheus.MustNewConstMetric(descLogSize, prometheus.GaugeValue, float64(st.Size), name, idx)
		}
	}
}

var (
	descClientMetric = prometheus.NewDesc("sharq_client_metric",
		"A metric a client pushed (KIP-714 PushTelemetry) under a client-metrics subscription: name is the OpenTelemetry metric name, attributes its data point and resource attributes (k=v,...). Gauges and cumulative sums hold the last value, delta sums the running total. Gone when the client disconnects or stops pushing.",
		[]string{"client_instance_id", "client_id", "name", "attributes"}, nil)
	descClientInstances = prometheus.NewDesc("sharq_client_metrics_instances",
		"Client instances known to client metrics (KIP-714): clients that asked for telemetry subscriptions and are still connected.", nil, nil)
	descClientSeriesDropped = prometheus.NewDesc("sharq_client_metric_series_dropped_total",
		"Pushed data points dropped because a client instance had 2000 series, or all together 100000.", nil, nil)
)

// clientMetricsCollector exposes what clients pushed (PushTelemetry).
type clientMetricsCollector struct{ s *Server }

func (c clientMetricsCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descClientMetric
	ch <- descClientInstances
	ch <- descClientSeriesDropped
}

func (c clientMetricsCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.s.clientMetrics.Collect(time.Now(), func(sm clientmetrics.Sample) {
		ch <- prometheus.MustNewConstMetric(descClientMetric, prometheus.UntypedValue, sm.Value,
			sm.InstanceID, labelValue(sm.ClientID), labelValue(sm.Name), labelValue(sm.Attrs))
	})
	ch <- prometheus.MustNewConstMetric(descClientInstances, prometheus.GaugeValue, float64(st.Instances))
	ch <- prometheus.MustNewConstMetric(descClientSeriesDropped, prometheus.CounterValue, float64(st.Dropped))
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
	// A series that cannot be gathered is logged and left out; the rest of
	// the page is still served.
	mux.Handle("/metrics", promhttp.HandlerFor(s.metrics.reg, promhttp.HandlerOpts{
		ErrorHandling: promhttp.ContinueOnError,
		ErrorLog:      promLogger{s.logger},
	}))
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
	if user == "" {
		return mux
	}
	// /healthz and /readyz stay open: orchestrators probe them without
	// credentials, and they reveal nothing.
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" && r.URL.Path != "/readyz" {
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

// promLogger sends promhttp's gather errors to the broker's log.
type promLogger struct{ l *slog.Logger }

func (p promLogger) Println(v ...any) { p.l.Error("metrics scrape", "err", fmt.Sprint(v...)) }

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
