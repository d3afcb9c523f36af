package broker

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/config"
	"sharq/log/crc32c"
	"sharq/raftmeta"
)

// No unauthorized byte out (issue 26 item 4): with StandardAuthorizer,
// allow.everyone.if.no.acl.found=false and a principal without ACLs
// (User:alice), every registered API at every version, with a well-formed
// request aimed at existing state and with random ones, answers without
// any name, id, offset, config value or record the principal may not see.
// The broker is seeded with secrets of every kind; a response carrying one
// that the request did not name is a leak. A well-formed request for a
// secret name must also be answered exactly as for an absent name of the
// same length (no existence oracle), and must carry an authorization
// error unless Kafka serves the API to everyone.

const (
	secretTopic  = "zz-secret-topic"
	absentTopic  = "zz-absent-topic"
	secretGroup  = "zz-secret-group"
	absentGroup  = "zz-absent-group"
	secretShare  = "zz-secret-share"
	absentShare  = "zz-absent-share"
	secretTxn    = "zz-secret-txnid"
	absentTxn    = "zz-absent-txnid"
	secretUser   = "zz-secret-user"
	secretBob    = "User:zz-secret-bob"
	secretValue  = "zz-secret-value"
	secretConfig = "918273645"    // retention.bytes of the secret topic
	secretOffset = int64(7315829) // committed by the secret group
)

// secretStrings are searched for, as substrings, in every string and byte
// field of a response.
var secretStrings = []string{secretTopic, secretGroup, secretShare, secretTxn, secretUser, secretBob, secretValue, secretConfig}

// namesRenamed maps each secret name a request may carry to its absent
// twin; same lengths, so a byte-level replacement keeps encodings valid.
var namesRenamed = [][2]string{{secretTopic, absentTopic}, {secretGroup, absentGroup}, {secretShare, absentShare}, {secretTxn, absentTxn}}

// kafkaServesEveryone are the APIs Kafka answers without any ACL (or whose
// answer to a principal without ACLs is an empty success).
var kafkaServesEveryone = map[int16]bool{
	3:  true, // Metadata: unauthorized topics answered with an error or left out
	16: true, // ListGroups: only describable groups listed
	17: true, // SaslHandshake
	18: true, // ApiVersions
	36: true, // SaslAuthenticate
	60: true, // DescribeCluster: brokers only, operations 0
	66: true, // ListTransactions: only describable ids listed
	71: true, // GetTelemetrySubscriptions
	72: true, // PushTelemetry
}

var authErrorCodes = map[int16]bool{
	kerr.TopicAuthorizationFailed.Code:           true,
	kerr.GroupAuthorizationFailed.Code:           true,
	kerr.ClusterAuthorizationFailed.Code:         true,
	kerr.TransactionalIDAuthorizationFailed.Code: true,
	kerr.IllegalSaslState.Code:                   true,
}

type leakEnv struct {
	s        *Server
	topicID  [16]byte
	fuzzName []string
}

func newLeakEnv(t testing.TB, opts ...func(*config.Config)) *leakEnv {
	cfg := config.New()
	cfg.LogDirs = t.TempDir()
	for _, o := range opts {
		o(cfg)
	}
	cfg.SetExplicit("authorizer.class.name", "org.apache.kafka.metadata.authorizer.StandardAuthorizer")
	cfg.SetExplicit("super.users", "User:admin")
	cfg.SetExplicit("allow.everyone.if.no.acl.found", "false")
	s, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Shutdown(t.Context()) })
	s.advertised = []config.Listener{{Name: "PLAINTEXT", Host: "127.0.0.1", Port: 9092}}
	if err := s.awaitCoordinators(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := s.meta.RegisterBroker(t.Context(), raftmeta.Broker{NodeID: s.cfg.NodeID, Host: "127.0.0.1", Port: 9092}); err != nil {
		t.Fatal(err)
	}
	e := &leakEnv{s: s}
	e.seed(t)
	return e
}

// asPrincipal runs req through handleFrame as principal p.
func (e *leakEnv) asPrincipal(t testing.TB, p string, req kmsg.Request) kmsg.Response {
	t.Helper()
	resp, _ := e.roundTrip(t, p, req, true)
	return resp
}

// roundTrip sends req as principal p and returns the decoded answer and
// its body bytes (nil, nil for acks=0).
func (e *leakEnv) roundTrip(t testing.TB, p string, req kmsg.Request, live bool) (kmsg.Response, []byte) {
	t.Helper()
	frame := encodeLeakFrame(req)
	c, out := newCaptureConn(t, e.s, live)
	c.auth.principal, c.auth.host = p, "127.0.0.1"
	if err := c.handleFrame(frame); err != nil {
		t.Fatalf("%s v%d as %s closed the connection: %v\nrequest: %+v", kmsg.NameForKey(req.Key()), req.GetVersion(), p, err, req)
	}
	if pr, ok := req.(*kmsg.ProduceRequest); ok && pr.Acks == 0 {
		return nil, nil
	}
	raw := out.frame(t)
	if raw == nil {
		t.Fatalf("%s v%d: no answer", kmsg.NameForKey(req.Key()), req.GetVersion())
	}
	body := raw[4:]
	kresp := req.ResponseKind()
	kresp.SetVersion(req.GetVersion())
	if kresp.IsFlexible() && req.Key() != apiVersionsKey {
		var err error
		if body, err = skipTags(body); err != nil {
			t.Fatal(err)
		}
	}
	if err := kresp.ReadFrom(body); err != nil {
		t.Fatalf("%s v%d: undecodable answer: %v", kmsg.NameForKey(req.Key()), req.GetVersion(), err)
	}
	return kresp, body
}

func encodeLeakFrame(req kmsg.Request) []byte {
	frame := binary.BigEndian.AppendUint16(nil, uint16(req.Key()))
	frame = binary.BigEndian.AppendUint16(frame, uint16(req.GetVersion()))
	frame = binary.BigEndian.AppendUint32(frame, 7)
	frame = binary.BigEndian.AppendUint16(frame, 1)
	frame = append(frame, 'f')
	if req.IsFlexible() {
		frame = append(frame, 0)
	}
	return req.AppendTo(frame)
}

// seed writes one secret of every kind as the super user.
func (e *leakEnv) seed(t testing.TB) {
	const admin = "User:admin"
	ct := kmsg.NewPtrCreateTopicsRequest()
	ct.Version, ct.TimeoutMillis = 7, 10000
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = secretTopic, 1, 1
	rt.Configs = []kmsg.CreateTopicsRequestTopicConfig{{Name: "retention.bytes", Value: kmsg.StringPtr(secretConfig)}}
	ct.Topics = []kmsg.CreateTopicsRequestTopic{rt}
	if r := e.asPrincipal(t, admin, ct).(*kmsg.CreateTopicsResponse); r.Topics[0].ErrorCode != 0 {
		t.Fatalf("create %s: %d", secretTopic, r.Topics[0].ErrorCode)
	}
	e.topicID = e.s.meta.Image().Topics[secretTopic].ID

	pr := kmsg.NewPtrProduceRequest()
	pr.Version, pr.Acks, pr.TimeoutMillis = 9, -1, 10000
	pr.Topics = []kmsg.ProduceRequestTopic{{Topic: secretTopic, Partitions: []kmsg.ProduceRequestTopicPartition{{Partition: 0, Records: recordBatchOf(secretValue)}}}}
	if r := e.asPrincipal(t, admin, pr).(*kmsg.ProduceResponse); r.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("produce: %d", r.Topics[0].Partitions[0].ErrorCode)
	}

	oc := kmsg.NewPtrOffsetCommitRequest()
	oc.Version, oc.Group, oc.Generation = 8, secretGroup, -1
	oc.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: secretTopic, Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: secretOffset, Metadata: kmsg.StringPtr(secretValue)}}}}
	if r := e.asPrincipal(t, admin, oc).(*kmsg.OffsetCommitResponse); r.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("commit: %d", r.Topics[0].Partitions[0].ErrorCode)
	}

	hb := kmsg.NewPtrShareGroupHeartbeatRequest()
	hb.Version, hb.GroupID, hb.MemberID, hb.MemberEpoch, hb.SubscribedTopicNames = 1, secretShare, "secretmember0123456789", 0, []string{secretTopic}
	if r := e.asPrincipal(t, admin, hb).(*kmsg.ShareGroupHeartbeatResponse); r.ErrorCode != 0 {
		t.Fatalf("share heartbeat: %d", r.ErrorCode)
	}

	ip := kmsg.NewPtrInitProducerIDRequest()
	ip.Version, ip.TransactionalID, ip.TransactionTimeoutMillis = 4, kmsg.StringPtr(secretTxn), 60000
	ipr := e.asPrincipal(t, admin, ip).(*kmsg.InitProducerIDResponse)
	if ipr.ErrorCode != 0 {
		t.Fatalf("init producer id: %d", ipr.ErrorCode)
	}
	ap := kmsg.NewPtrAddPartitionsToTxnRequest()
	ap.Version, ap.TransactionalID, ap.ProducerID, ap.ProducerEpoch = 3, secretTxn, ipr.ProducerID, ipr.ProducerEpoch
	ap.Topics = []kmsg.AddPartitionsToTxnRequestTopic{{Topic: secretTopic, Partitions: []int32{0}}}
	if r := e.asPrincipal(t, admin, ap).(*kmsg.AddPartitionsToTxnResponse); r.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("add partitions to txn: %d", r.Topics[0].Partitions[0].ErrorCode)
	}

	ca := kmsg.NewPtrCreateACLsRequest()
	ca.Version = 3
	ca.Creations = []kmsg.CreateACLsRequestCreation{{ResourceType: 2, ResourceName: secretTopic, ResourcePatternType: 3, Principal: secretBob, Host: "*", Operation: 3, PermissionType: 3}}
	if r := e.asPrincipal(t, admin, ca).(*kmsg.CreateACLsResponse); r.Results[0].ErrorCode != 0 {
		t.Fatalf("create acl: %d", r.Results[0].ErrorCode)
	}

	as := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
	as.Upsertions = []kmsg.AlterUserSCRAMCredentialsRequestUpsertion{{Name: secretUser, Mechanism: 1, Iterations: 4096, Salt: []byte("salt"), SaltedPassword: bytes.Repeat([]byte{1}, 32)}}
	if r := e.asPrincipal(t, admin, as).(*kmsg.AlterUserSCRAMCredentialsResponse); r.Results[0].ErrorCode != 0 {
		t.Fatalf("scram upsert: %d", r.Results[0].ErrorCode)
	}
	e.fuzzName = append(slices.Clone(fuzzNames), secretTopic, secretGroup, secretShare, secretTxn, secretUser, secretBob)
}

// recordBatchOf is one uncompressed batch whose single record has value v.
func recordBatchOf(v string) []byte {
	b := benchBatch(1, len(v))
	// benchBatch's record ends with its value (zeros) and a header count
	// of 0; put v there and recompute the CRC.
	copy(b[len(b)-1-len(v):], v)
	binary.BigEndian.PutUint32(b[17:], crc32c.Checksum(b[21:]))
	return b
}

// validRequest fills req as a client would to reach the named state: every
// topic field the secret topic (by name or id), every group the secret
// group (share APIs: the secret share group), every transactional id the
// secret one.
func (e *leakEnv) validRequest(key int16, names map[string]string) kmsg.Request {
	req := kmsg.RequestForKey(key)
	if d, ok := req.(interface{ Default() }); ok {
		d.Default()
	}
	g := validFiller{e: e, key: key, names: names}
	g.fill(reflect.ValueOf(req).Elem(), "", 0)
	return req
}

type validFiller struct {
	e     *leakEnv
	key   int16
	names map[string]string // kind ("topic", "group", "txn") -> name
}

func shareAPI(key int16) bool { return key >= 76 && key <= 79 || key >= 90 && key <= 92 }

func (g *validFiller) str(field string) string {
	f := strings.ToLower(field)
	switch {
	case strings.Contains(f, "transactionalid"):
		return g.names["txn"]
	case strings.Contains(f, "topic") || f == "resourcename":
		return g.names["topic"]
	case strings.Contains(f, "group") || f == "groups" || f == "coordinatorkeys" || f == "key" && g.key == 10:
		if shareAPI(g.key) {
			return g.names["share"]
		}
		return g.names["group"]
	case strings.Contains(f, "memberid"):
		return "leakmember0123456789ab"
	case f == "principal":
		return "User:alice"
	case f == "host":
		return "*"
	case f == "mechanism":
		return "PLAIN"
	case f == "protocoltype":
		return "consumer"
	case f == "protocol" || f == "name" && g.key == 11:
		return "range"
	case f == "name" || f == "configname" || f == "key":
		return "retention.bytes"
	case f == "value":
		return "1000"
	}
	return "x"
}

func (g *validFiller) integer(field string) int64 {
	switch f := strings.ToLower(field); {
	case strings.Contains(f, "timeout"):
		return 1000
	case strings.Contains(f, "maxbytes"):
		return 1 << 20
	case f == "maxwaitmillis" || f == "minbytes":
		return 0
	case f == "acks":
		return -1
	case f == "replicaid" || f == "brokerid" || f == "generation" || f == "producerid" || f == "producerepoch" ||
		f == "currentleaderepoch" || f == "lastfetchedepoch" || f == "leaderepoch" || f == "timestamp":
		return -1
	case f == "resourcetype":
		if g.key == 32 || g.key == 33 || g.key == 44 {
			return 2 // config resource TOPIC
		}
		return 2 // ACL resource TOPIC
	case f == "resourcepatterntype" || f == "patterntype":
		return 3 // LITERAL
	case f == "operation":
		return 2 // ALL
	case f == "permissiontype":
		return 3 // ALLOW
	case f == "replicationfactor" || f == "numpartitions" || f == "isolationlevel" || f == "keytype" || f == "coordinatortype" && g.key == 10:
		if f == "keytype" || f == "coordinatortype" {
			if shareAPI(g.key) {
				return 0
			}
			return 0
		}
		return 1
	case f == "count":
		return 2
	case f == "mechanism":
		return 1
	case f == "iterations":
		return 4096
	case f == "maxrecords" || f == "batchsize":
		return 10
	}
	return 0
}

func (g *validFiller) fill(v reflect.Value, field string, depth int) {
	switch v.Kind() {
	case reflect.Struct:
		if v.Type() == tagsType {
			return
		}
		for i := 0; i < v.NumField(); i++ {
			if ft := v.Type().Field(i); ft.IsExported() && !(depth == 0 && ft.Name == "Version") {
				g.fill(v.Field(i), ft.Name, depth+1)
			}
		}
	case reflect.Bool:
		v.SetBool(strings.HasPrefix(field, "Include") || field == "AllowAutoTopicCreation")
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Int:
		v.SetInt(g.integer(field))
	case reflect.String:
		v.SetString(g.str(field))
	case reflect.Array:
		if v.Type() == uuidType && strings.Contains(strings.ToLower(field), "topic") {
			v.Set(reflect.ValueOf(g.e.topicID))
		}
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		g.fill(p.Elem(), field, depth+1)
		v.Set(p)
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			if field == "Records" {
				v.SetBytes(recordBatchOf("alice"))
			}
			return
		}
		sl := reflect.MakeSlice(v.Type(), 1, 1)
		elemField := strings.TrimSuffix(field, "s")
		if field == "Partitions" || field == "PartitionIndexes" {
			elemField = "Partition"
		}
		g.fill(sl.Index(0), elemField, depth+1)
		v.Set(sl)
	}
}

// secretsIn collects what a request names (strings and ids), so an echo of
// it in the response is not counted as a leak.
func collectStrings(v reflect.Value, out map[string]bool, ids map[[16]byte]bool, ints map[int64]bool) {
	switch v.Kind() {
	case reflect.Struct:
		if v.Type() == tagsType {
			return
		}
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				collectStrings(v.Field(i), out, ids, ints)
			}
		}
	case reflect.String:
		out[v.String()] = true
	case reflect.Int64:
		ints[v.Int()] = true
	case reflect.Array:
		if v.Type() == uuidType {
			ids[v.Interface().([16]byte)] = true
		}
	case reflect.Pointer:
		if !v.IsNil() {
			collectStrings(v.Elem(), out, ids, ints)
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			out[string(v.Bytes())] = true
			return
		}
		for i := 0; i < v.Len(); i++ {
			collectStrings(v.Index(i), out, ids, ints)
		}
	}
}

// leaks walks every field of resp and reports each secret it carries that
// req did not name.
func (e *leakEnv) leaks(req kmsg.Request, resp kmsg.Response) []string {
	strs, ids, ints := map[string]bool{}, map[[16]byte]bool{}, map[int64]bool{}
	collectStrings(reflect.ValueOf(req).Elem(), strs, ids, ints)
	named := func(secret string) bool {
		for s := range strs {
			if strings.Contains(s, secret) {
				return true
			}
		}
		return false
	}
	var out []string
	var walk func(v reflect.Value, path string)
	walk = func(v reflect.Value, path string) {
		switch v.Kind() {
		case reflect.Struct:
			if v.Type() == tagsType {
				return
			}
			for i := 0; i < v.NumField(); i++ {
				if ft := v.Type().Field(i); ft.IsExported() {
					walk(v.Field(i), path+"."+ft.Name)
				}
			}
		case reflect.String:
			for _, s := range secretStrings {
				if strings.Contains(v.String(), s) && !named(s) {
					out = append(out, fmt.Sprintf("%s = %q", path, v.String()))
				}
			}
		case reflect.Int64:
			if v.Int() == secretOffset && !ints[secretOffset] {
				out = append(out, fmt.Sprintf("%s = %d (the secret group's committed offset)", path, v.Int()))
			}
		case reflect.Array:
			if v.Type() == uuidType && v.Interface().([16]byte) == e.topicID && !ids[e.topicID] {
				out = append(out, fmt.Sprintf("%s = the secret topic's id", path))
			}
		case reflect.Pointer:
			if !v.IsNil() {
				walk(v.Elem(), path)
			}
		case reflect.Slice:
			if v.Type().Elem().Kind() == reflect.Uint8 {
				for _, s := range secretStrings {
					if bytes.Contains(v.Bytes(), []byte(s)) && !named(s) {
						out = append(out, fmt.Sprintf("%s carries %q", path, s))
					}
				}
				return
			}
			for i := 0; i < v.Len(); i++ {
				walk(v.Index(i), fmt.Sprintf("%s[%d]", path, i))
			}
		}
	}
	walk(reflect.ValueOf(resp).Elem(), kmsg.NameForKey(req.Key())+"Response")
	return out
}

// errorCodes collects every ErrorCode field of a response.
func errorCodes(v reflect.Value, out []int16) []int16 {
	switch v.Kind() {
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			ft := v.Type().Field(i)
			if ft.Name == "ErrorCode" && v.Field(i).Kind() == reflect.Int16 {
				out = append(out, int16(v.Field(i).Int()))
			} else if ft.IsExported() {
				out = errorCodes(v.Field(i), out)
			}
		}
	case reflect.Pointer:
		if !v.IsNil() {
			out = errorCodes(v.Elem(), out)
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() != reflect.Uint8 {
			for i := 0; i < v.Len(); i++ {
				out = errorCodes(v.Index(i), out)
			}
		}
	}
	return out
}

const alice = "User:alice"

func TestNoUnauthorizedByteOut(t *testing.T) {
	e := newLeakEnv(t)
	secret := map[string]string{"topic": secretTopic, "group": secretGroup, "share": secretShare, "txn": secretTxn}
	absent := map[string]string{"topic": absentTopic, "group": absentGroup, "share": absentShare, "txn": absentTxn}
	var summary []string
	for _, api := range registeredAPIs() {
		var codesSeen []int16
		for v := api.minVersion; v <= api.maxVersion; v++ {
			req := e.validRequest(api.key, secret)
			req.SetVersion(v)
			resp, _ := e.roundTrip(t, alice, req, false)
			if resp == nil {
				continue
			}
			for _, l := range e.leaks(req, resp) {
				t.Errorf("%s v%d (well-formed): leak %s", kmsg.NameForKey(api.key), v, l)
			}
			codes := errorCodes(reflect.ValueOf(resp).Elem(), nil)
			codesSeen = append(codesSeen, codes...)
			// DescribeLogDirs before v3 has no error code: Kafka answers an
			// empty list (the leak walk checks it is empty).
			servesEveryone := kafkaServesEveryone[api.key] || api.key == 35 && v < 3
			if !servesEveryone && !slices.ContainsFunc(codes, func(c int16) bool { return authErrorCodes[c] }) {
				t.Errorf("%s v%d: no authorization error in %v", kmsg.NameForKey(api.key), v, codes)
			}
			// The same request for absent names must be answered alike.
			twin := e.validRequest(api.key, absent)
			twin.SetVersion(v)
			tresp, _ := e.roundTrip(t, alice, twin, false)
			if a, b := comparable(resp), renameBack(comparable(tresp)); !bytes.Equal(a, b) {
				t.Errorf("%s v%d: a secret name is answered unlike an absent one (existence oracle)\nsecret: %x\nabsent: %x", kmsg.NameForKey(api.key), v, a, b)
			}
		}
		slices.Sort(codesSeen)
		summary = append(summary, fmt.Sprintf("%s %v", kmsg.NameForKey(api.key), slices.Compact(codesSeen)))
	}
	sort.Strings(summary)
	t.Logf("error codes per API (well-formed requests, all versions):\n%s", strings.Join(summary, "\n"))

	// Random requests, every API and version, with the secret names in
	// the pool the fuzz source draws from.
	saved := fuzzNames
	fuzzNames = e.fuzzName
	defer func() { fuzzNames = saved }()
	rounds := 8
	if testing.Short() {
		rounds = 2
	}
	for _, api := range registeredAPIs() {
		for v := api.minVersion; v <= api.maxVersion; v++ {
			for i := range rounds {
				data := make([]byte, 256)
				for j := range data {
					data[j] = byte((int(api.key)*131 + int(v)*31 + i*17 + j*7) ^ (j >> 2))
				}
				req := kmsg.RequestForKey(api.key)
				if d, ok := req.(interface{ Default() }); ok {
					d.Default()
				}
				(&fuzzSource{b: data}).fill(reflect.ValueOf(req).Elem(), 0)
				req.SetVersion(v)
				boundResources(req)
				resp, _ := e.roundTrip(t, alice, req, false)
				if resp == nil {
					continue
				}
				for _, l := range e.leaks(req, resp) {
					t.Errorf("%s v%d (random #%d): leak %s\nrequest: %+v", kmsg.NameForKey(api.key), v, i, l, req)
				}
			}
		}
	}
}

// comparable encodes resp without the fields that differ from one answer
// to the next whatever was asked (a new fetch session's id, a new client
// instance id).
func comparable(resp kmsg.Response) []byte {
	switch r := resp.(type) {
	case *kmsg.FetchResponse:
		r.SessionID = 0
	case *kmsg.GetTelemetrySubscriptionsResponse:
		r.ClientInstanceID, r.SubscriptionID = [16]byte{}, 0
	}
	return resp.AppendTo(nil)
}

// TestLeakWalkFindsSecrets: the walk above is only worth its silence if it
// sees the secrets where the super user may read them.
func TestLeakWalkFindsSecrets(t *testing.T) {
	e := newLeakEnv(t)
	secret := map[string]string{"topic": secretTopic, "group": secretGroup, "share": secretShare, "txn": secretTxn}
	for _, tc := range []struct {
		key     int16
		version int16
		want    string
	}{
		{1, 12, secretValue},         // Fetch: the record
		{9, 8, "7315829"},            // OffsetFetch: the committed offset
		{32, 4, secretConfig},        // DescribeConfigs: retention.bytes
		{29, 3, secretBob},           // DescribeACLs: the binding's principal
		{50, 0, secretUser},          // DescribeUserSCRAMCredentials
		{3, 12, "secret topic's id"}, // Metadata by name answers the id
	} {
		req := e.validRequest(tc.key, secret)
		req.SetVersion(tc.version)
		switch r := req.(type) {
		case *kmsg.DescribeACLsRequest:
			r.ResourceName, r.Principal, r.Host = nil, nil, nil            // match every binding
			r.ResourcePatternType, r.Operation, r.PermissionType = 1, 1, 1 // ANY
		case *kmsg.DescribeUserSCRAMCredentialsRequest:
			r.Users = nil // every user
		case *kmsg.MetadataRequest:
			r.Topics[0].TopicID = [16]byte{}
		}
		resp, _ := e.roundTrip(t, "User:admin", req, true)
		leaks := strings.Join(e.leaks(req, resp), "\n")
		if !strings.Contains(leaks, tc.want) {
			t.Errorf("%s v%d as admin: the walk did not find %q; it found:\n%s\nresponse: %+v", kmsg.NameForKey(tc.key), tc.version, tc.want, leaks, resp)
		}
	}
}

// renameBack turns an answer about the absent names into one about the
// secret names, byte for byte.
func renameBack(b []byte) []byte {
	for _, p := range namesRenamed {
		b = bytes.ReplaceAll(b, []byte(p[1]), []byte(p[0]))
	}
	return b
}
