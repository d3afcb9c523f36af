package broker

// GetTelemetrySubscriptions: v0
//
// Behavior:
// * KIP-714. A zero ClientInstanceId gets a new one. The client instance is
//   matched against the client-metrics subscriptions (Image.ClientMetrics)
//   by client_instance_id, client_id, client_software_name/version (from
//   ApiVersions v3+) and client_source_address/port; the answer carries the
//   union of the matched metrics prefixes ("*" = all), the shortest push
//   interval (300000 ms when none matches), Kafka's accepted compression
//   types (zstd, lz4, gzip, snappy), telemetry.max.bytes and delta
//   temporality.
// * A second request within the push interval is THROTTLING_QUOTA_EXCEEDED
//   (unless the last push failed with UNKNOWN_SUBSCRIPTION_ID or
//   UNSUPPORTED_COMPRESSION_TYPE), as in Kafka's ClientMetricsManager.
// * Kafka advertises this API only with a telemetry exporter plugin; sharq
//   always has one (pushed metrics become series on metrics.listener).
// * The subscription id is Kafka's formula (CRC32C of the metrics list and
//   interval, xor the instance id's hash) over a sorted list, so its value
//   can differ from Kafka's for the same subscription; clients only compare
//   it with what they were given.

import (
	"errors"
	"net"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/raftmeta/clientmetrics"
)

func init() { regKey(71, 0, 0, handleGetTelemetrySubscriptions) }

func handleGetTelemetrySubscriptions(r *request, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.GetTelemetrySubscriptionsRequest)
	resp := req.ResponseKind().(*kmsg.GetTelemetrySubscriptionsResponse)
	sub, err := r.s.clientMetrics.Get(time.Now(), r.s.meta.Image().ClientMetrics, req.ClientInstanceID, r.telemetryClient(), r.c.id)
	if err != nil {
		resp.ErrorCode = telemetryErrorCode(err)
		return resp, nil
	}
	resp.ClientInstanceID = sub.InstanceID
	resp.SubscriptionID = sub.SubscriptionID
	resp.AcceptedCompressionTypes = clientmetrics.AcceptedCompression
	resp.PushIntervalMillis = sub.PushIntervalMs
	resp.TelemetryMaxBytes = sub.MaxBytes
	resp.DeltaTemporality = true
	resp.RequestedMetrics = sub.Metrics
	if resp.RequestedMetrics == nil {
		resp.RequestedMetrics = []string{}
	}
	return resp, nil
}

// telemetryClient is what client metrics selectors match this connection's
// client on.
func (r *request) telemetryClient() clientmetrics.Client {
	c := clientmetrics.Client{ClientID: r.clientID, SoftwareName: r.c.softwareName, SoftwareVersion: r.c.softwareVersion}
	if a, ok := r.c.nc.RemoteAddr().(*net.TCPAddr); ok {
		c.SourceAddress, c.SourcePort = a.IP.String(), strconv.Itoa(a.Port)
	}
	return c
}

// telemetryErrorCode maps clientmetrics' errors to Kafka codes.
func telemetryErrorCode(err error) int16 {
	switch {
	case errors.Is(err, clientmetrics.ErrThrottled):
		return kerr.ThrottlingQuotaExceeded.Code
	case errors.Is(err, clientmetrics.ErrUnknownSubscription):
		return kerr.UnknownSubscriptionID.Code
	case errors.Is(err, clientmetrics.ErrUnsupportedCompression):
		return kerr.UnsupportedCompressionType.Code
	case errors.Is(err, clientmetrics.ErrTooLarge):
		return kerr.TelemetryTooLarge.Code
	case errors.Is(err, clientmetrics.ErrInvalidRecord):
		return kerr.InvalidRecord.Code
	case errors.Is(err, clientmetrics.ErrInvalidConfig):
		return kerr.InvalidConfig.Code
	}
	return kerr.InvalidRequest.Code
}
