package broker

// AlterUserScramCredentials: v0
//
// Behavior (Kafka's ScramControlManager.alterCredentials):
// * A user named twice in one request (deletions and upsertions together)
//   gets DUPLICATE_RESOURCE and none of its changes apply.
// * Empty user: UNACCEPTABLE_CREDENTIAL; unknown mechanism:
//   UNSUPPORTED_SASL_MECHANISM; iterations outside 4096..16384:
//   UNACCEPTABLE_CREDENTIAL; deleting a credential that does not exist:
//   RESOURCE_NOT_FOUND.
// * The client sends salt and salted password; the stored and server keys
//   are derived here and only they are stored (raft metadata), as in Kafka.
// * All valid changes are one metadata command. Needs ALTER on the cluster.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/broker/security"
	"sharq/raftmeta"
)

func init() { regKey(51, 0, 0, handleAlterUserScramCredentials, coordinatorFree) }

func handleAlterUserScramCredentials(r *request, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.AlterUserSCRAMCredentialsRequest)
	resp := req.ResponseKind().(*kmsg.AlterUserSCRAMCredentialsResponse)
	type failure struct {
		code int16
		msg  string
	}
	errs := map[string]failure{}
	var order []string // users in the order Kafka answers: deletions, upsertions, errors
	result := func(user string, code int16, msg string) {
		res := kmsg.NewAlterUserSCRAMCredentialsResponseResult()
		res.User, res.ErrorCode = user, code
		if msg != "" {
			res.ErrorMessage = kmsg.StringPtr(msg)
		}
		resp.Results = append(resp.Results, res)
	}
	if !r.authorizeCluster(opAlter) {
		for _, d := range req.Deletions {
			result(d.Name, kerr.ClusterAuthorizationFailed.Code, "")
		}
		for _, u := range req.Upsertions {
			result(u.Name, kerr.ClusterAuthorizationFailed.Code, "")
		}
		return resp, nil
	}
	img := r.s.meta.Image()
	validate := func(user string, mech int8) (failure, bool) {
		if user == "" {
			return failure{kerr.UnacceptableCredential.Code, "Username must not be empty"}, false
		}
		if _, ok := security.ScramMechanismByType(mech); !ok {
			return failure{kerr.UnsupportedSaslMechanism.Code, "Unknown SCRAM mechanism"}, false
		}
		return failure{}, true
	}
	dels := map[string]raftmeta.ScramKey{}
	ups := map[string]kmsg.AlterUserSCRAMCredentialsRequestUpsertion{}
	dupe := failure{kerr.DuplicateResource.Code, "A user credential cannot be altered twice in the same request"}
	for _, d := range req.Deletions {
		if _, bad := errs[d.Name]; bad {
			continue
		}
		if _, ok := dels[d.Name]; ok {
			delete(dels, d.Name)
			errs[d.Name] = dupe
			continue
		}
		f, ok := validate(d.Name, d.Mechanism)
		key := raftmeta.ScramKey{User: d.Name, Mechanism: d.Mechanism}
		if _, exists := img.Scram[key]; ok && !exists {
			f, ok = failure{kerr.ResourceNotFound.Code, "Attempt to delete a user credential that does not exist"}, false
		}
		if !ok {
			errs[d.Name] = f
			continue
		}
		dels[d.Name] = key
		order = append(order, d.Name)
	}
	for _, u := range req.Upsertions {
		if _, bad := errs[u.Name]; bad {
			continue
		}
		_, inDel := dels[u.Name]
		_, inUp := ups[u.Name]
		if inDel || inUp {
			delete(dels, u.Name)
			delete(ups, u.Name)
			errs[u.Name] = dupe
			continue
		}
		f, ok := validate(u.Name, u.Mechanism)
		if ok && u.Iterations < security.MinScramIterations {
			f, ok = failure{kerr.UnacceptableCredential.Code, "Too few iterations"}, false
		} else if ok && u.Iterations > security.MaxScramIterations {
			f, ok = failure{kerr.UnacceptableCredential.Code, "Too many iterations"}, false
		}
		if !ok {
			errs[u.Name] = f
			continue
		}
		ups[u.Name] = u
		order = append(order, u.Name)
	}
	upserts := map[raftmeta.ScramKey]raftmeta.ScramCredential{}
	var deletes []raftmeta.ScramKey
	var done []string
	for _, name := range order {
		if k, ok := dels[name]; ok {
			deletes = append(deletes, k)
			done = append(done, name)
		} else if u, ok := ups[name]; ok {
			m, _ := security.ScramMechanismByType(u.Mechanism)
			c := m.CredentialFromSalted(u.SaltedPassword, u.Salt, u.Iterations)
			upserts[raftmeta.ScramKey{User: name, Mechanism: u.Mechanism}] = raftmeta.ScramCredential(c)
			done = append(done, name)
		}
	}
	if len(upserts) > 0 || len(deletes) > 0 {
		if err := r.s.meta.AlterScram(r.ctx, upserts, deletes); err != nil {
			code, msg := metaErrorCode(err)
			for _, name := range done {
				result(name, code, msg)
			}
			done = nil
		}
	}
	for _, name := range done {
		result(name, 0, "")
	}
	for _, d := range req.Deletions {
		if f, ok := errs[d.Name]; ok {
			result(d.Name, f.code, f.msg)
			delete(errs, d.Name)
		}
	}
	for _, u := range req.Upsertions {
		if f, ok := errs[u.Name]; ok {
			result(u.Name, f.code, f.msg)
			delete(errs, u.Name)
		}
	}
	return resp, nil
}
