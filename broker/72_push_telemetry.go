package broker

// PushTelemetry: v0
//
// Behavior:
// * KIP-714. Checked in Kafka's order: a zero or reserved instance id is
//   INVALID_REQUEST; after a terminating push, INVALID_REQUEST; a push
//   before the push interval has passed (a first push right after
//   GetTelemetrySubscriptions is allowed, and so is a terminating one) is
//   THROTTLING_QUOTA_EXCEEDED; a subscription id other than the instance's
//   is UNKNOWN_SUBSCRIPTION_ID; a compression id Kafka does not know is
//   UNSUPPORTED_COMPRESSION_TYPE; more than telemetry.max.bytes is
//   TELEMETRY_TOO_LARGE.
// * The payload (OTLP MetricsData, decompressed with log's codecs, at most
//   telemetry.max.bytes once decompressed, else TELEMETRY_TOO_LARGE) is
//   decoded and kept as series sharq_client_metric{client_instance_id,
//   client_id, name, attributes} on metrics.listener (Kafka hands it to an
//   exporter plugin instead); bytes that do not decode are INVALID_RECORD,
//   as a failing plugin is on Kafka. Series leave with the client's
//   connection or after 3 push intervals (at least 60 s) without requests.

import (
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/log"
	"sharq/raftmeta/clientmetrics"
)

func init() { regKey(72, 0, 0, handlePushTelemetry) }

func handlePushTelemetry(r *request, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.PushTelemetryRequest)
	resp := req.ResponseKind().(*kmsg.PushTelemetryResponse)
	p := clientmetrics.PushRequest{
		InstanceID:     req.ClientInstanceID,
		SubscriptionID: req.SubscriptionID,
		Terminating:    req.Terminating,
		Compression:    req.CompressionType,
		Metrics:        req.Metrics,
	}
	err := r.s.clientMetrics.Push(time.Now(), r.s.meta.Image().ClientMetrics, p, r.telemetryClient(), r.c.id, decompressTelemetry)
	if err != nil {
		r.c.logger.Debug("push telemetry refused", "client_id", r.clientID, "err", err)
		resp.ErrorCode = telemetryErrorCode(err)
	}
	return resp, nil
}

// decompressTelemetry undoes a push's compression (Kafka's codec ids and
// stream formats, as in record batches), bounded by limit.
func decompressTelemetry(codec int8, p []byte, limit int) ([]byte, error) {
	if codec == 0 {
		if len(p) > limit {
			return nil, clientmetrics.ErrTooLarge
		}
		return p, nil
	}
	out, err := log.Decompress(nil, int(codec), p, limit)
	if err != nil {
		if errors.Is(err, log.ErrDecompressLimit) {
			return nil, clientmetrics.ErrTooLarge
		}
		return nil, err
	}
	return out, nil
}
