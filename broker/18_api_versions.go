package broker

// ApiVersions: v0-5
//
// Behavior:
// * Lists every API in the registry with its version range, and (v3+, as
//   tagged fields) the supported and finalized features, like Kafka 4.4.
// * A version we do not support gets a v0-shaped UNSUPPORTED_VERSION answer
//   listing only ApiVersions' own range (KIP-511); the client retries with a
//   version from it. The response header is always v0.
//
// Version notes:
// * v3: ClientSoftwareName/Version (validated: INVALID_REQUEST on a bad name)
// * v5: ClusterId + NodeId (KIP-1242): both or neither; a mismatch answers
//   REBOOTSTRAP_REQUIRED.

import (
	"regexp"
	"strconv"

	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/raftmeta"
)

const apiVersionsKey = 18

func init() { regKey(apiVersionsKey, 0, 5, handleApiVersions, coordinatorFree) }

var softwareNameRE = regexp.MustCompile(`^[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?$`)

func handleApiVersions(r *request, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.ApiVersionsRequest)
	resp := req.ResponseKind().(*kmsg.ApiVersionsResponse)
	if r.version >= 3 && (!softwareNameRE.MatchString(req.ClientSoftwareName) || !softwareNameRE.MatchString(req.ClientSoftwareVersion)) {
		resp.ErrorCode = errInvalidRequest
		fillAPIKeys(resp)
		return resp, nil
	}
	if r.version >= 5 {
		hasCluster := req.ClusterID != nil
		hasNode := req.NodeID != -1
		switch {
		case hasCluster != hasNode:
			resp.ErrorCode = errInvalidRequest
			fillAPIKeys(resp)
			return resp, nil
		case hasCluster && (*req.ClusterID != r.s.meta.Image().ClusterID || req.NodeID != r.node()):
			resp.ErrorCode = errRebootstrapRequired
			fillAPIKeys(resp)
			return resp, nil
		}
	}
	fillAPIKeys(resp)
	if r.version >= 3 {
		r.c.softwareName, r.c.softwareVersion = req.ClientSoftwareName, req.ClientSoftwareVersion
		img := r.s.meta.Image()
		features := raftmeta.Features()
		for _, f := range features {
			// v0-v3 omit features whose minimum is 0 (KAFKA-17011).
			if r.version < 4 && f.Min == 0 {
				continue
			}
			resp.SupportedFeatures = append(resp.SupportedFeatures, kmsg.ApiVersionsResponseSupportedFeature{
				Name: f.Name, MinVersion: f.Min, MaxVersion: f.Max,
			})
		}
		for _, f := range features {
			if lvl := img.Features[f.Name]; lvl > 0 {
				resp.FinalizedFeatures = append(resp.FinalizedFeatures, kmsg.ApiVersionsResponseFinalizedFeature{
					Name: f.Name, MinVersionLevel: lvl, MaxVersionLevel: lvl,
				})
			}
		}
		resp.FinalizedFeaturesEpoch = int64(img.AppliedIndex)
	}
	return resp, nil
}

func fillAPIKeys(resp *kmsg.ApiVersionsResponse) {
	for _, e := range registeredAPIs() {
		resp.ApiKeys = append(resp.ApiKeys, kmsg.ApiVersionsResponseApiKey{
			ApiKey: e.key, MinVersion: e.minVersion, MaxVersion: e.maxVersion,
		})
	}
}

// unsupportedAPIVersions is the KIP-511 answer to an ApiVersions request of a
// version we do not know.
func unsupportedAPIVersions() *kmsg.ApiVersionsResponse {
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.ErrorCode = errUnsupportedVersion
	e := lookupAPI(apiVersionsKey)
	resp.ApiKeys = []kmsg.ApiVersionsResponseApiKey{{ApiKey: e.key, MinVersion: e.minVersion, MaxVersion: e.maxVersion}}
	return resp
}

func itoa(v int32) string { return strconv.FormatInt(int64(v), 10) }
