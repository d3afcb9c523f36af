package broker

// UpdateFeatures: v0-2
//
// Behavior:
// * Validates every update against raftmeta's feature table and the
//   finalized levels (raftmeta.ValidateFeatureUpdates); the first failing
//   update fails the whole request with INVALID_UPDATE_VERSION and Kafka's
//   "The update failed for all features since the following feature had an
//   error: ..." message. Otherwise the levels are finalized in order
//   (ValidateOnly: kafka-features.sh --dry-run only validates).
//
// Version notes:
// * v0: AllowDowngrade (safe downgrade) instead of UpgradeType.
// * v2: no per-feature results; the top-level error says it all.

import (
	"context"
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/raftmeta"
)

func init() { regKey(57, 0, 2, handleUpdateFeatures) }

func handleUpdateFeatures(r *request, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.UpdateFeaturesRequest)
	resp := req.ResponseKind().(*kmsg.UpdateFeaturesResponse)
	if !r.authorizeCluster(opAlter) {
		code := errClusterAuthorizationFailed
		resp.ErrorCode = code
		if r.version < 2 {
			for _, u := range req.FeatureUpdates {
				resp.Results = append(resp.Results, kmsg.UpdateFeaturesResponseResult{Feature: u.Feature, ErrorCode: code})
			}
		}
		return resp, nil
	}
	updates := make([]raftmeta.FeatureUpdate, 0, len(req.FeatureUpdates))
	for _, u := range req.FeatureUpdates {
		typ := raftmeta.UpgradeType(u.UpgradeType)
		if r.version == 0 {
			typ = raftmeta.Upgrade
			if u.AllowDowngrade {
				typ = raftmeta.SafeDowngrade
			}
		}
		// Kafka reads a level below 1 as "disable".
		updates = append(updates, raftmeta.FeatureUpdate{Name: u.Feature, Level: max(u.MaxVersionLevel, 0), Type: typ})
	}
	timeout := time.Duration(req.TimeoutMillis) * time.Millisecond
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	ctx, cancel := context.WithTimeout(r.ctx, timeout)
	defer cancel()
	err := r.s.meta.UpdateFeatures(ctx, updates, req.ValidateOnly)
	var code int16
	var msg *string
	if err != nil {
		var fe *raftmeta.FeatureUpdateError
		m := err.Error()
		if errors.As(err, &fe) {
			code = errInvalidUpdateVersion
			m = "The update failed for all features since the following feature had an error: " + fe.Msg
		} else {
			code, m = metaErrorCode(err)
		}
		msg = &m
	}
	resp.ErrorCode, resp.ErrorMessage = code, msg
	if r.version < 2 {
		for _, u := range req.FeatureUpdates {
			res := kmsg.NewUpdateFeaturesResponseResult()
			res.Feature, res.ErrorCode, res.ErrorMessage = u.Feature, code, msg
			resp.Results = append(resp.Results, res)
		}
	}
	return resp, nil
}
