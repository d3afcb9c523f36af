package broker

// Connection security: TLS on SSL and SASL_SSL listeners (the handshake runs
// in conn.serve before the request loops, bounded by
// sharq.ssl.handshake.timeout.ms) and the SASL state of SASL_PLAINTEXT and
// SASL_SSL connections. Kafka's SaslServerAuthenticator rules: before
// authentication only ApiVersions, SaslHandshake and SaslAuthenticate are
// served, anything else closes the connection; a failed authentication is
// answered with SASL_AUTHENTICATION_FAILED and the connection closes. The
// two SASL APIs are 17_sasl_handshake.go and 36_sasl_authenticate.go; the
// mechanisms themselves are pure state machines in broker/security.

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/broker/security"
	"sharq/config"
	"sharq/raftmeta"
)

// listenerSecurity is a listener's security, built once at start-up.
type listenerSecurity struct {
	cfg        config.ListenerSecurity
	tls        *tls.Config // nil: no TLS
	rules      []config.PrincipalRule
	plainUsers map[string]string
}

func buildListenerSecurity(cfg *config.Config) ([]listenerSecurity, error) {
	out := make([]listenerSecurity, len(cfg.Listeners))
	for i, l := range cfg.Listeners {
		ls := listenerSecurity{cfg: cfg.Security(l)}
		if ls.cfg.TLS() {
			tc, err := security.ServerTLS(ls.cfg)
			if err != nil {
				return nil, err
			}
			ls.tls = tc
			if ls.rules, err = config.ParsePrincipalRules(ls.cfg.PrincipalRules); err != nil {
				return nil, fmt.Errorf("listener %s: ssl.principal.mapping.rules: %w", l.Name, err)
			}
		}
		if ls.cfg.SASL() && slices.Contains(ls.cfg.Mechanisms, "PLAIN") {
			users, err := security.PlainUsers(ls.cfg.JAAS["PLAIN"])
			if err != nil {
				return nil, fmt.Errorf("listener %s: listener.name.%s.plain.sasl.jaas.config: %w", l.Name, strings.ToLower(l.Name), err)
			}
			ls.plainUsers = users
		}
		out[i] = ls
	}
	return out, nil
}

// connAuth is a connection's identity and SASL progress; only the processor
// goroutine touches it.
type connAuth struct {
	principal     string // "User:ANONYMOUS" until known
	host          string // the client's IP, as ACL bindings name hosts
	sasl          bool   // the listener requires SASL
	authenticated bool
	mechanism     string          // chosen in SaslHandshake
	server        security.Server // the exchange in progress, nil between exchanges
	badMechanism  string          // re-authentication asked for another mechanism
	raw           bool            // SaslHandshake v0: the next frames are bare tokens
	expires       time.Time       // session end (connections.max.reauth.ms); zero: never
	reauthMs      int64
	// closeAfter is set by a handler whose answer must be the last thing
	// the connection sends (failed authentication).
	closeAfter error
}

func (c *conn) sec() *listenerSecurity { return &c.s.security[c.listener] }

// startSecurity runs the TLS handshake and sets the initial principal. It
// reports false if the connection must close.
func (c *conn) startSecurity() bool {
	ls := c.sec()
	c.auth.principal = "User:ANONYMOUS"
	c.auth.host = c.remoteHost()
	c.auth.sasl = ls.cfg.SASL()
	tc, ok := c.nc.(*tls.Conn)
	if !ok {
		return true
	}
	timeout := time.Duration(ls.cfg.HandshakeTimeoutMs) * time.Millisecond
	ctx, cancel := context.WithTimeout(c.ctx, timeout)
	defer cancel()
	if err := tc.HandshakeContext(ctx); err != nil {
		c.logger.Info("TLS handshake failed", "err", err)
		return false
	}
	if !c.auth.sasl {
		p, err := security.CertPrincipal(tc.ConnectionState(), ls.rules)
		if err != nil {
			c.logger.Info("closing connection: ssl.principal.mapping.rules", "err", err)
			return false
		}
		c.auth.principal = p
	}
	return true
}

// checkAuth gates a request before it is decoded: Kafka's
// SaslServerAuthenticator serves nothing but ApiVersions and the SASL
// exchange before authentication, and a session past its lifetime ends.
func (c *conn) checkAuth(key int16) error {
	a := &c.auth
	if !a.sasl {
		return nil
	}
	if !a.authenticated {
		switch {
		case a.server == nil && (key == apiVersionsKey || key == saslHandshakeKey):
			return nil
		case a.server != nil && key == saslAuthenticateKey:
			return nil
		case a.server == nil:
			return fmt.Errorf("unexpected Kafka request of type %s during SASL handshake", kmsg.NameForKey(key))
		default:
			return fmt.Errorf("unexpected Kafka request of type %s during SASL authentication", kmsg.NameForKey(key))
		}
	}
	if !a.expires.IsZero() && time.Now().After(a.expires) && a.server == nil && key != saslHandshakeKey {
		return fmt.Errorf("SASL session of %s expired (connections.max.reauth.ms)", a.principal)
	}
	if a.server != nil && key != saslAuthenticateKey {
		return fmt.Errorf("unexpected Kafka request of type %s during SASL re-authentication", kmsg.NameForKey(key))
	}
	return nil
}

// saslStep feeds one token to the exchange in progress. On completion it
// installs the principal (or checks it is unchanged on re-authentication).
func (c *conn) saslStep(token []byte) ([]byte, error) {
	a := &c.auth
	if a.badMechanism != "" {
		return nil, &security.AuthError{Message: a.badMechanism}
	}
	out, done, err := a.server.Step(token)
	if err != nil {
		a.server = nil
		if a.authenticated {
			var ae *security.AuthError
			if errors.As(err, &ae) && len(ae.Message) > 0 {
				// Kafka says "re-authentication" for a failure there.
				return nil, &security.AuthError{Message: replaceAuthText(ae.Message)}
			}
		}
		return nil, err
	}
	if !done {
		return out, nil
	}
	p := a.server.Principal()
	a.server = nil
	if a.authenticated && p != a.principal {
		return nil, &security.AuthError{Message: fmt.Sprintf("Cannot change principals during re-authentication from %s: %s", dotted(a.principal), dotted(p))}
	}
	a.principal, a.authenticated = p, true
	a.reauthMs = c.sec().cfg.ReauthMs[a.mechanism]
	a.expires = time.Time{}
	if a.reauthMs > 0 {
		a.expires = time.Now().Add(time.Duration(a.reauthMs) * time.Millisecond)
	}
	return out, nil
}

func replaceAuthText(s string) string {
	return strings.Replace(s, "during authentication", "during re-authentication", 1)
}

// dotted prints a principal as Kafka's re-authentication message does:
// type.name.
func dotted(p string) string { return strings.Replace(p, ":", ".", 1) }

// rawSASL serves a bare token frame after SaslHandshake v0: the answer is a
// bare size-prefixed token; a failure closes the connection without one.
func (c *conn) rawSASL(frame []byte) error {
	a := &c.auth
	if a.server == nil {
		a.raw = false
		return errors.New("SASL token after the exchange completed")
	}
	if int64(len(frame)) > c.sec().cfg.MaxReceiveSize {
		return fmt.Errorf("SASL token of %d bytes is larger than sasl.server.max.receive.size", len(frame))
	}
	out, err := c.saslStep(frame)
	if err != nil {
		return fmt.Errorf("SASL authentication failed: %w", err)
	}
	if a.server == nil {
		a.raw = false
	}
	if out == nil && a.authenticated {
		return nil
	}
	b := binary.BigEndian.AppendUint32(c.wbuf[:0], uint32(len(out)))
	b = append(b, out...)
	c.wbuf = b
	_, err = c.nc.Write(b)
	return err
}

// remoteHost is the client's IP address, as ACL hosts name it.
func (c *conn) remoteHost() string {
	if a, ok := c.nc.RemoteAddr().(*net.TCPAddr); ok {
		return a.IP.String()
	}
	host, _, err := net.SplitHostPort(c.nc.RemoteAddr().String())
	if err != nil {
		return ""
	}
	return host
}

// bootstrapScram creates the sharq.scram.bootstrap credentials a user does
// not have yet (kafka-storage format --add-scram, but applied at every
// start, so an existing credential, perhaps changed since, is never
// overwritten).
func (s *Server) bootstrapScram() error {
	users := s.cfg.ScramBootstrapUsers()
	if len(users) == 0 {
		return nil
	}
	img := s.meta.Image()
	upserts := map[raftmeta.ScramKey]raftmeta.ScramCredential{}
	for _, u := range users {
		m, _ := security.ScramMechanismByName(u.Mechanism)
		key := raftmeta.ScramKey{User: u.Name, Mechanism: m.Type}
		if _, ok := img.Scram[key]; ok {
			continue
		}
		c, err := m.NewCredential(u.Password, u.Iterations)
		if err != nil {
			return fmt.Errorf("sharq.scram.bootstrap: %s for %s: %w", u.Mechanism, u.Name, err)
		}
		upserts[key] = raftmeta.ScramCredential(c)
	}
	if len(upserts) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(s.ctx, 10*time.Second)
	defer cancel()
	if err := s.meta.AlterScram(ctx, upserts, nil); err != nil {
		if errors.Is(err, raftmeta.ErrNotController) {
			// Another node leads and will apply its own bootstrap list.
			s.logger.Warn("sharq.scram.bootstrap skipped: this node is not the controller")
			return nil
		}
		return fmt.Errorf("sharq.scram.bootstrap: %w", err)
	}
	return nil
}
