package broker

// The schema registry (package schema) served on schema.registry.listeners:
// this file gives it the _schemas topic (schema.Log over the partition
// log), its listeners with the broker's TLS keys, basic authentication
// against the SCRAM credentials or a users file, and authorization by
// ACLs. It starts only when schema.registry.listeners is set.
//
// Authorization (with authorizer.class.name set) maps each request onto a
// Kafka ACL check, so kafka-acls grants it:
//
//	request on a subject S             ACL on TOPIC resource S (literal or prefixed)
//	  list / describe                  DESCRIBE
//	  read versions, look up, check    READ
//	  register                         WRITE
//	  delete a version or S            DELETE
//	  read S's config or mode          DESCRIBE_CONFIGS
//	  change S's config or mode        ALTER_CONFIGS
//	global config and mode, contexts   ACL on CLUSTER: DESCRIBE_CONFIGS to read,
//	                                   ALTER_CONFIGS to change, DESCRIBE to list
//	                                   contexts, ALTER to delete one
//
// Kafka's implications hold (READ, WRITE, DELETE, ALTER imply DESCRIBE;
// ALTER_CONFIGS implies DESCRIBE_CONFIGS). A context-qualified subject is
// the TOPIC resource named ":.ctx:name", so a prefixed ACL on ":.ctx:"
// covers a context. The principal is User:<basic auth user>; without basic
// auth, the client certificate's principal on an https listener with
// ssl.client.auth, else User:ANONYMOUS.

import (
	"bufio"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"sharq/broker/security"
	"sharq/config"
	"sharq/log"
	"sharq/log/recordbatch"
	"sharq/raftmeta"
	"sharq/raftmeta/acl"
	"sharq/schema"
	"sharq/schema/formats"
	"sharq/share"
)

// schemaRegistry is the registry this node serves.
type schemaRegistry struct {
	reg     *schema.Registry
	servers []*http.Server
	addrs   []string // the bound listeners, scheme://host:port
}

// startSchemaRegistry creates _schemas if needed, reads it and binds the
// registry's listeners. Nothing happens without schema.registry.listeners.
func (s *Server) startSchemaRegistry() error {
	sc := s.cfg.SchemaRegistry()
	if len(sc.Listeners) == 0 {
		return nil
	}
	start := time.Now()
	logger := s.logger.With("component", "schema-registry")
	if err := s.ensureSchemasTopic(sc, logger); err != nil {
		return fmt.Errorf("schema registry: %w", err)
	}
	fs := s.schemaFormats
	if fs == nil {
		fs = formats.All()
	}
	ctx, cancel := context.WithTimeout(s.ctx, 60*time.Second)
	defer cancel()
	reg, err := schema.Open(ctx, schema.Options{
		Log:                  &schemaLog{s: s, topic: sc.Topic},
		Formats:              fs,
		DefaultCompatibility: sc.Compatibility,
		ClusterID:            s.meta.Image().ClusterID,
		GroupID:              sc.GroupID,
		Logger:               logger,
	})
	if err != nil {
		return err
	}
	auth, err := newSchemaAuth(s, sc)
	if err != nil {
		return fmt.Errorf("schema registry: %w", err)
	}
	opts := schema.HandlerOptions{Authenticator: auth, Realm: sc.Realm, Logger: logger}
	if s.authz != nil {
		opts.Authorizer = schemaAuthz{s}
	}
	h := schema.NewHandler(reg, opts)
	sr := &schemaRegistry{reg: reg}
	var tc *tls.Config
	for _, l := range sc.Listeners {
		addr := net.JoinHostPort(l.Host, fmt.Sprint(l.Port))
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			sr.close()
			return fmt.Errorf("listen schema.registry.listeners %s: %w", l, err)
		}
		if l.Scheme == "https" {
			if tc == nil {
				if tc, err = security.ServerTLS(sc.Security); err != nil {
					ln.Close()
					sr.close()
					return fmt.Errorf("schema.registry.listeners TLS: %w", err)
				}
			}
			ln = tls.NewListener(ln, tc)
		}
		bound := config.SchemaRegistryListener{Scheme: l.Scheme, Host: l.Host, Port: ln.Addr().(*net.TCPAddr).Port}
		if bound.Host == "" || bound.Host == "0.0.0.0" || bound.Host == "::" {
			bound.Host = "localhost"
		}
		sr.addrs = append(sr.addrs, bound.String())
		// net/http's own complaints (TLS handshakes, malformed requests) go
		// to the broker's log at debug, not to stderr.
		srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second,
			ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelDebug)}
		sr.servers = append(sr.servers, srv)
		s.bgWG.Add(1)
		go func() {
			defer s.bgWG.Done()
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				logger.Error("schema registry listener stopped", "listener", bound.String(), "err", err)
			}
		}()
	}
	s.bgWG.Add(1)
	go func() {
		defer s.bgWG.Done()
		reg.Run(s.ctx)
	}()
	s.schemaReg = sr
	st := reg.Stats()
	logger.Info("schema registry listening", "listeners", strings.Join(sr.addrs, ","), "subjects", st.Subjects,
		"versions", st.Versions, "took", time.Since(start).Round(time.Microsecond))
	return nil
}

func (sr *schemaRegistry) close() {
	for _, srv := range sr.servers {
		srv.Close()
	}
}

// stopSchemaRegistry stops the listeners, letting requests in flight end.
func (s *Server) stopSchemaRegistry(ctx context.Context) {
	if s.schemaReg == nil {
		return
	}
	for _, srv := range s.schemaReg.servers {
		srv.Shutdown(ctx)
	}
}

// SchemaRegistryAddrs are the bound schema registry listeners (none when
// it is off), as scheme://host:port.
func (s *Server) SchemaRegistryAddrs() []string {
	if s.schemaReg == nil {
		return nil
	}
	return s.schemaReg.addrs
}

// ensureSchemasTopic creates the registry's topic as Confluent's KafkaStore
// does (one partition, cleanup.policy=compact, the replication factor
// capped at the brokers there are), or checks the one there is.
func (s *Server) ensureSchemasTopic(sc config.SchemaRegistry, logger interface{ Warn(string, ...any) }) error {
	t := s.meta.Image().Topics[sc.Topic]
	if t == nil {
		rf := min(sc.ReplicationFactor, len(sortedBrokerIDs(s.meta.Image())))
		if rf < sc.ReplicationFactor {
			logger.Warn("creating the schema topic with a replication factor below the desired one", "topic", sc.Topic, "replication_factor", rf, "desired", sc.ReplicationFactor)
		}
		ctx, cancel := context.WithTimeout(s.ctx, 30*time.Second)
		defer cancel()
		_, err := s.createTopic(ctx, sc.Topic, 1, int16(max(rf, 1)), map[string]string{"cleanup.policy": "compact"}, false)
		var te *topicCreateError
		if err != nil && !(errors.As(err, &te) && te.code == errTopicAlreadyExists) {
			return fmt.Errorf("create topic %s: %w", sc.Topic, err)
		}
		t = s.meta.Image().Topics[sc.Topic]
		if t == nil {
			return fmt.Errorf("topic %s not in the metadata after creating it", sc.Topic)
		}
	}
	if n := len(t.Partitions); n != 1 {
		return fmt.Errorf("the schema topic %s should have only 1 partition but has %d", sc.Topic, n)
	}
	if p := config.TopicValue(s.effectiveConfig(), t.Configs, "cleanup.policy"); p != "compact" {
		return fmt.Errorf("the retention policy of the schema topic %s is incorrect: expected cleanup.policy to be 'compact' but it is %s", sc.Topic, p)
	}
	if s.partitionFor(sc.Topic, 0) == nil {
		return fmt.Errorf("partition %s-0 is not led by this node (%d): the registry runs on its leader", sc.Topic, s.cfg.NodeID)
	}
	return nil
}

// schemaLog is schema.Log over partition 0 of the registry's topic.
type schemaLog struct {
	s     *Server
	topic string
	buf   []byte // Read's scratch, used under the registry's apply lock
}

func (l *schemaLog) partition() (*partition, *log.Log, error) {
	pt := l.s.partitionFor(l.topic, 0)
	if pt == nil {
		return nil, nil, fmt.Errorf("partition %s-0 is not served here", l.topic)
	}
	lg, err := pt.acquire()
	if err != nil {
		return nil, nil, fmt.Errorf("partition %s-0: %w", l.topic, err)
	}
	return pt, lg, nil
}

// Append writes the records as one uncompressed CreateTime batch, as
// Confluent's producer (acks=all) does one record at a time; the log's
// flush policy applies as to any produce.
func (l *schemaLog) Append(ctx context.Context, recs []schema.Record) (int64, error) {
	pt, lg, err := l.partition()
	if err != nil {
		return 0, err
	}
	defer pt.release()
	now := time.Now().UnixMilli()
	out := make([]share.DLQRecord, len(recs))
	for i, r := range recs {
		out[i] = share.DLQRecord{Timestamp: now, Key: r.Key, Value: r.Value}
	}
	epoch := int32(-1)
	if t := l.s.meta.Image().Topics[l.topic]; t != nil && len(t.Partitions) > 0 {
		epoch = t.Partitions[0].LeaderEpoch
	}
	res, err := lg.Append(encodeDLQBatch(out), epoch)
	if err != nil {
		if errors.Is(err, log.ErrMessageTooLarge) {
			return 0, fmt.Errorf("append to %s-0: %w", l.topic, schema.ErrRecordTooLarge)
		}
		return 0, fmt.Errorf("append to %s-0: %w", l.topic, err)
	}
	pt.wake()
	return res.LastOffset, nil
}

// Read returns the records of the batches from the one holding from.
// The records' keys and values point into a buffer the next Read reuses;
// the registry applies them before it reads again.
func (l *schemaLog) Read(ctx context.Context, from int64) ([]schema.Record, int64, error) {
	pt, lg, err := l.partition()
	if err != nil {
		return nil, from, err
	}
	defer pt.release()
	// The high watermark before the read: a read finding no batch from
	// there up to the (later) end found none below this either, so skipping
	// to it skips only a hole. Taken after the read, it could pass a batch
	// appended in between, unread.
	hw := lg.HighWatermark()
	data, err := lg.Read(from, 1<<20, l.buf[:0])
	if schemaLogAfterRead != nil {
		schemaLogAfterRead()
	}
	if errors.Is(err, log.ErrOffsetOutOfRange) && from < lg.LogStartOffset() {
		return nil, lg.LogStartOffset(), nil // records deleted below the log start
	}
	if err != nil {
		return nil, from, fmt.Errorf("read %s-0 at %d: %w", l.topic, from, err)
	}
	l.buf = data
	var recs []schema.Record
	next, err := walkRecords(data, from, math.MaxInt64, schemaMaxInflate, func(off, ts int64, rec *recordbatch.Record) {
		recs = append(recs, schema.Record{Offset: off, Timestamp: ts, Key: rec.Key, Value: rec.Value})
	})
	if err != nil {
		return nil, from, fmt.Errorf("read %s-0 at %d: %w", l.topic, from, err)
	}
	if next < 0 {
		// No batch from there to the high watermark: compaction left a
		// hole, or this is the end.
		next = max(from, hw)
	}
	return recs, next, nil
}

// schemaLogAfterRead runs between Read's log read and its use (tests: an
// append racing with a read at the end of the log).
var schemaLogAfterRead func()

// schemaMaxInflate bounds one compressed batch of _schemas once unpacked.
const schemaMaxInflate = 64 << 20

// Wait returns once the high watermark passes offset.
func (l *schemaLog) Wait(ctx context.Context, offset int64) error {
	for {
		pt := l.s.partitionFor(l.topic, 0)
		if pt == nil {
			return fmt.Errorf("partition %s-0 is not served here", l.topic)
		}
		ch := make(chan struct{}, 1)
		// Watch first, then look: an append in between still wakes us.
		pt.Watch(ch)
		lg, err := pt.acquire()
		if err != nil {
			pt.Unwatch(ch)
			return fmt.Errorf("partition %s-0: %w", l.topic, err)
		}
		hw := lg.HighWatermark()
		pt.release()
		if hw > offset {
			pt.Unwatch(ch)
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			pt.Unwatch(ch)
			return ctx.Err()
		}
	}
}

// schemaAuth authenticates registry requests: basic auth against a users
// file or the SCRAM credentials, else the client certificate, else
// User:ANONYMOUS.
type schemaAuth struct {
	s     *Server
	basic bool
	users map[string]string // from the users file; nil: SCRAM
	rules []config.PrincipalRule

	mu       sync.Mutex
	verified map[[32]byte]struct{} // user, password and stored key that checked out
}

func newSchemaAuth(s *Server, sc config.SchemaRegistry) (*schemaAuth, error) {
	a := &schemaAuth{s: s, basic: sc.BasicAuth, verified: map[[32]byte]struct{}{}}
	rules, err := config.ParsePrincipalRules(sc.Security.PrincipalRules)
	if err != nil {
		return nil, fmt.Errorf("ssl.principal.mapping.rules: %w", err)
	}
	a.rules = rules
	if a.basic && sc.UsersFile != "" {
		users, err := readUsersFile(sc.UsersFile)
		if err != nil {
			return nil, err
		}
		a.users = users
	}
	return a, nil
}

// readUsersFile reads Jetty's HashLoginService format, as Confluent's
// basic auth takes it: "name: password[,role...]" per line, # comments;
// the password plain or MD5:<hex> (OBF and CRYPT are not read).
func readUsersFile(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("schema.registry.basic.auth.users.file: %w", err)
	}
	defer f.Close()
	users := map[string]string{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, rest, ok := strings.Cut(line, ":")
		if !ok || strings.TrimSpace(name) == "" {
			return nil, fmt.Errorf("schema.registry.basic.auth.users.file %s line %d: not name: password[,role...]", path, n)
		}
		pass, _, _ := strings.Cut(rest, ",")
		pass = strings.TrimSpace(pass)
		if strings.HasPrefix(pass, "OBF:") || strings.HasPrefix(pass, "CRYPT:") {
			return nil, fmt.Errorf("schema.registry.basic.auth.users.file %s line %d: OBF and CRYPT passwords are not supported (plain or MD5:<hex>)", path, n)
		}
		users[strings.TrimSpace(name)] = pass
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("schema.registry.basic.auth.users.file %s: %w", path, err)
	}
	return users, nil
}

// Authenticate implements schema.Authenticator.
func (a *schemaAuth) Authenticate(r *http.Request) (string, bool) {
	if !a.basic {
		if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
			if p, err := security.CertPrincipal(*r.TLS, a.rules); err == nil {
				return p, true
			}
		}
		return "User:ANONYMOUS", true
	}
	user, pass, ok := r.BasicAuth()
	if !ok || user == "" {
		return "", false
	}
	if a.users != nil {
		want, ok := a.users[user]
		if !ok {
			return "", false
		}
		got := pass
		if hexSum, isMD5 := strings.CutPrefix(want, "MD5:"); isMD5 {
			sum := md5.Sum([]byte(pass))
			got, want = hex.EncodeToString(sum[:]), strings.ToLower(hexSum)
		}
		return "User:" + user, subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
	}
	return "User:" + user, a.checkScram(user, pass)
}

// checkScram verifies a password against the user's SCRAM credentials as
// a SCRAM exchange would: the salted password's stored key must be the
// stored one. A verified password is remembered with the stored key, so
// the key derivation runs once per credential, not per request.
func (a *schemaAuth) checkScram(user, pass string) bool {
	img := a.s.meta.Image()
	for _, mech := range []int8{2, 1} { // SCRAM-SHA-512 first, as the stronger
		cred, ok := img.Scram[raftmeta.ScramKey{User: user, Mechanism: mech}]
		if !ok {
			continue
		}
		m, _ := security.ScramMechanismByType(mech)
		h := sha256.New()
		for _, part := range [][]byte{[]byte(user), {0}, []byte(pass), {0}, cred.StoredKey, cred.Salt} {
			h.Write(part)
		}
		var key [32]byte
		h.Sum(key[:0])
		a.mu.Lock()
		_, known := a.verified[key]
		a.mu.Unlock()
		if known {
			return true
		}
		salted, err := m.SaltedPassword(pass, cred.Salt, int(cred.Iterations))
		if err != nil {
			return false
		}
		c := m.CredentialFromSalted(salted, cred.Salt, cred.Iterations)
		if subtle.ConstantTimeCompare(c.StoredKey, cred.StoredKey) != 1 {
			return false
		}
		a.mu.Lock()
		if len(a.verified) >= 4096 {
			clear(a.verified)
		}
		a.verified[key] = struct{}{}
		a.mu.Unlock()
		return true
	}
	return false
}

// schemaAuthz maps registry requests onto ACLs (see the file comment).
type schemaAuthz struct{ s *Server }

// subjectOps and registryOps are the ACL operations of a request on a
// subject (TOPIC) and on the registry as a whole (CLUSTER).
var (
	subjectOps = map[schema.Operation]int8{
		schema.OpDescribe: opDescribe, schema.OpRead: opRead, schema.OpWrite: opWrite, schema.OpDelete: opDelete,
		schema.OpReadConfig: opDescribeConfigs, schema.OpWriteConfig: opAlterConfigs,
	}
	registryOps = map[schema.Operation]int8{
		schema.OpDescribe: opDescribe, schema.OpRead: opDescribe, schema.OpWrite: opAlter, schema.OpDelete: opAlter,
		schema.OpReadConfig: opDescribeConfigs, schema.OpWriteConfig: opAlterConfigs,
	}
)

func (z schemaAuthz) Allowed(principal, host string, op schema.Operation, subject string) bool {
	a := z.s.authz
	if a == nil {
		return true
	}
	act := acl.Action{ResourceType: resTopic, Name: subject, Operation: subjectOps[op]}
	if subject == "" {
		act = acl.Action{ResourceType: resCluster, Name: acl.ClusterName, Operation: registryOps[op]}
	}
	return a.Authorize(z.s.meta.Image().ACLs, principal, host, act)
}
