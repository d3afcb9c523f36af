package broker

// DescribeUserScramCredentials: v0
//
// Behavior (Kafka's ScramImage.describe):
// * No users (null or empty): every user with a credential. Named users:
//   each once, RESOURCE_NOT_FOUND for a user without credentials and
//   DUPLICATE_RESOURCE for a user named twice.
// * Only mechanisms and iterations are returned, never salts or keys.
// * Results are sorted by user (Kafka's order is a hash map's).
// * Needs DESCRIBE on the cluster (CLUSTER_AUTHORIZATION_FAILED).

import (
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/raftmeta"
)

func init() { regKey(50, 0, 0, handleDescribeUserScramCredentials, coordinatorFree) }

func handleDescribeUserScramCredentials(r *request, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DescribeUserSCRAMCredentialsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeUserSCRAMCredentialsResponse)
	if !r.authorizeCluster(opDescribe) {
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		return resp, nil
	}
	creds := r.s.meta.Image().Scram
	dup := map[string]bool{}
	if len(req.Users) == 0 {
		for k := range creds {
			dup[k.User] = false
		}
	} else {
		for _, u := range req.Users {
			_, seen := dup[u.Name]
			dup[u.Name] = seen
		}
	}
	users := make([]string, 0, len(dup))
	for u := range dup {
		users = append(users, u)
	}
	sort.Strings(users)
	for _, u := range users {
		res := kmsg.NewDescribeUserSCRAMCredentialsResponseResult()
		res.User = u
		switch {
		case dup[u]:
			res.ErrorCode = kerr.DuplicateResource.Code
			res.ErrorMessage = kmsg.StringPtr("Cannot describe SCRAM credentials for the same user twice in a single request: " + u)
		default:
			for _, mech := range []int8{1, 2} {
				if c, ok := creds[raftmeta.ScramKey{User: u, Mechanism: mech}]; ok {
					res.CredentialInfos = append(res.CredentialInfos, kmsg.DescribeUserSCRAMCredentialsResponseResultCredentialInfo{Mechanism: mech, Iterations: c.Iterations})
				}
			}
			if len(res.CredentialInfos) == 0 {
				res.ErrorCode = kerr.ResourceNotFound.Code
				res.ErrorMessage = kmsg.StringPtr("Attempt to describe a user credential that does not exist: " + u)
			}
		}
		resp.Results = append(resp.Results, res)
	}
	return resp, nil
}
