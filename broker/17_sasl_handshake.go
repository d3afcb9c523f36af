package broker

// SaslHandshake: v0-1
//
// Behavior (Kafka's SaslServerAuthenticator):
// * Names the mechanism of the exchange to come and is answered with the
//   listener's enabled mechanisms. Before authentication a SASL listener
//   serves only this and ApiVersions (checkAuth in auth.go).
// * A mechanism the listener does not enable: UNSUPPORTED_SASL_MECHANISM,
//   and the connection closes after the answer.
// * Outside the authenticator (a non-SASL listener, or an authenticated
//   session that cannot re-authenticate: connections.max.reauth.ms unset,
//   or v0): ILLEGAL_SASL_STATE.
// * Re-authentication (KIP-368) must keep the mechanism: another one
//   fails the exchange's SaslAuthenticate with Kafka's message.
//
// Version notes:
// * v0: the tokens follow as bare size-prefixed frames (rawSASL in
//   auth.go); v1 (every current client) carries them in SaslAuthenticate.

import (
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/broker/security"
	"sharq/raftmeta"
)

const saslHandshakeKey = 17

func init() { regKey(saslHandshakeKey, 0, 1, handleSaslHandshake, coordinatorFree) }

func handleSaslHandshake(r *request, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.SASLHandshakeRequest)
	resp := req.ResponseKind().(*kmsg.SASLHandshakeResponse)
	c, a := r.c, &r.c.auth
	ls := c.sec()
	// Kafka answers a handshake outside the authenticator (a non-SASL
	// listener, or an authenticated session that cannot re-authenticate)
	// with ILLEGAL_SASL_STATE.
	if !a.sasl || (a.authenticated && (a.reauthMs <= 0 || r.version < 1)) {
		resp.ErrorCode = kerr.IllegalSaslState.Code
		return resp, nil
	}
	resp.SupportedMechanisms = append([]string(nil), ls.cfg.Mechanisms...)
	srv := c.newSASLServer(req.Mechanism)
	if srv == nil {
		resp.ErrorCode = kerr.UnsupportedSaslMechanism.Code
		a.closeAfter = fmt.Errorf("unsupported SASL mechanism %s", req.Mechanism)
		return resp, nil
	}
	a.badMechanism = ""
	if a.authenticated && req.Mechanism != a.mechanism {
		a.badMechanism = fmt.Sprintf("SASL mechanism '%s' requested by client is not supported for re-authentication of mechanism '%s'", req.Mechanism, a.mechanism)
	}
	a.server = srv
	if !a.authenticated {
		a.mechanism = req.Mechanism
	}
	a.raw = r.version == 0
	return resp, nil
}

func (c *conn) newSASLServer(mech string) security.Server {
	ls := c.sec()
	if !slices.Contains(ls.cfg.Mechanisms, mech) {
		return nil
	}
	switch mech {
	case "PLAIN":
		return &security.PlainServer{Users: ls.plainUsers}
	case security.ScramSHA256.Name, security.ScramSHA512.Name:
		m, _ := security.ScramMechanismByName(mech)
		return &security.ScramServer{Mech: m, Lookup: func(user string) (security.ScramCredential, bool) {
			cr, ok := c.s.meta.Image().Scram[raftmeta.ScramKey{User: user, Mechanism: m.Type}]
			return security.ScramCredential(cr), ok
		}}
	}
	return nil
}
