package broker

// SaslAuthenticate: v0-2
//
// Behavior (Kafka's SaslServerAuthenticator):
// * Carries one token of the exchange SaslHandshake began (saslStep in
//   auth.go); the mechanisms are pure state machines in broker/security.
// * Without an exchange in progress: ILLEGAL_SASL_STATE with Kafka's
//   message. A token over sasl.server.max.receive.size closes the
//   connection.
// * A failed step: SASL_AUTHENTICATION_FAILED with the mechanism's
//   message ("re-authentication" when re-authenticating), and the
//   connection closes after the answer.
//
// Version notes:
// * v1: SessionLifetimeMillis, the session's end
//   (connections.max.reauth.ms of the mechanism), in the last step.
// * v2: flexible.

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const saslAuthenticateKey = 36

func init() { regKey(saslAuthenticateKey, 0, 2, handleSaslAuthenticate, coordinatorFree) }

func handleSaslAuthenticate(r *request, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.SASLAuthenticateRequest)
	resp := req.ResponseKind().(*kmsg.SASLAuthenticateResponse)
	a := &r.c.auth
	if !a.sasl || a.server == nil {
		resp.ErrorCode = kerr.IllegalSaslState.Code
		msg := "SaslAuthenticate request received after successful authentication"
		resp.ErrorMessage = &msg
		return resp, nil
	}
	if int64(len(req.SASLAuthBytes)) > r.c.sec().cfg.MaxReceiveSize {
		return nil, fmt.Errorf("SASL token of %d bytes is larger than sasl.server.max.receive.size", len(req.SASLAuthBytes))
	}
	out, err := r.c.saslStep(req.SASLAuthBytes)
	if err != nil {
		resp.ErrorCode = kerr.SaslAuthenticationFailed.Code
		msg := err.Error()
		resp.ErrorMessage = &msg
		a.closeAfter = err
		return resp, nil
	}
	resp.SASLAuthBytes = out
	if a.server == nil && a.authenticated { // this step completed the exchange
		resp.SessionLifetimeMillis = a.reauthMs
	}
	return resp, nil
}
