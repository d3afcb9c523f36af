package broker

// DescribeCluster: v0-2
//
// Behavior:
// * Registered brokers (this node by the listener the client used), the
//   cluster id and the controller. EndpointType 1 (brokers) only: asking for
//   controllers (2) is UNSUPPORTED_VERSION, as on a Kafka broker listener.
// * Fenced brokers are stopped virtual brokers (docs/virtual-brokers.md):
//   left out, or listed with IsFenced with v2's IncludeFencedBrokers.

import "github.com/twmb/franz-go/pkg/kmsg"

func init() { regKey(60, 0, 2, handleDescribeCluster, coordinatorFree) }

func handleDescribeCluster(r *request, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DescribeClusterRequest)
	resp := req.ResponseKind().(*kmsg.DescribeClusterResponse)
	img := r.s.meta.Image()
	resp.EndpointType = 1
	resp.ClusterAuthorizedOperations = authorizedOperationsNotRequested
	if r.version >= 1 && req.EndpointType != 1 {
		resp.ErrorCode = errUnsupportedVersion
		msg := "The broker does not support DESCRIBE_CLUSTER with endpoint type controllers"
		resp.ErrorMessage = &msg
		resp.EndpointType = req.EndpointType
		return resp, nil
	}
	resp.ClusterID = img.ClusterID
	resp.ControllerID = img.ControllerID
	if req.IncludeClusterAuthorizedOperations {
		resp.ClusterAuthorizedOperations = 0
		if r.authorizeCluster(opDescribe) {
			resp.ClusterAuthorizedOperations = r.authorizedOperations(resCluster, "kafka-cluster", clusterAllOperations)
		}
	}
	for _, b := range r.brokerList(img) {
		db := kmsg.NewDescribeClusterResponseBroker()
		db.NodeID, db.Host, db.Port, db.Rack = b.NodeID, b.Host, b.Port, b.Rack
		resp.Brokers = append(resp.Brokers, db)
	}
	if r.s.virtual && r.version >= 2 && req.IncludeFencedBrokers {
		resp.Brokers = r.fencedBrokers(resp.Brokers)
	}
	return resp, nil
}
