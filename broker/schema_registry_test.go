package broker_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"

	"sharq/broker/brokertest"
)

const userV1 = `{"type":"record","name":"User","namespace":"test","fields":[{"name":"name","type":"string"},{"name":"age","type":"long"}]}`

// userV2 adds a field with a default: BACKWARD compatible.
const userV2 = `{"type":"record","name":"User","namespace":"test","fields":[{"name":"name","type":"string"},{"name":"age","type":"long"},{"name":"email","type":"string","default":""}]}`

// userBad adds a field without a default: not BACKWARD compatible.
const userBad = `{"type":"record","name":"User","namespace":"test","fields":[{"name":"name","type":"string"},{"name":"age","type":"long"},{"name":"phone","type":"string"}]}`

type user struct {
	Name string
	Age  int64
}

// avroUser is the Avro binary encoding of a test.User v1 (a string and a
// long, zig-zag varints), the encoding a serializer would write.
func avroUser(u user) []byte {
	b := binary.AppendVarint(nil, int64(len(u.Name)))
	b = append(b, u.Name...)
	return binary.AppendVarint(b, u.Age)
}

func decodeAvroUser(b []byte) (user, error) {
	n, k := binary.Varint(b)
	if k <= 0 || n < 0 || int(n) > len(b)-k {
		return user{}, errors.New("bad name")
	}
	name := string(b[k : k+int(n)])
	age, k2 := binary.Varint(b[k+int(n):])
	if k2 <= 0 {
		return user{}, errors.New("bad age")
	}
	return user{name, age}, nil
}

func newSR(t *testing.T, b *brokertest.Broker, opts ...sr.ClientOpt) *sr.Client {
	t.Helper()
	cl, err := sr.NewClient(append([]sr.ClientOpt{sr.URLs(b.SchemaRegistryURL)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// TestSchemaRegistryFranzGo: franz-go's sr client registers, looks up,
// evolves and checks schemas against sharq's registry, and its Serde
// encodes records produced to sharq and decodes them consumed back.
func TestSchemaRegistryFranzGo(t *testing.T) {
	t.Parallel()
	b := brokertest.New(t, brokertest.WithSchemaRegistry())
	cl := newSR(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	const subject = "users-value"
	s1, err := cl.CreateSchema(ctx, subject, sr.Schema{Schema: userV1})
	if err != nil {
		t.Fatal(err)
	}
	if s1.ID != 1 || s1.Version != 1 {
		t.Fatalf("created %+v", s1)
	}
	got, err := cl.SchemaByID(ctx, s1.ID)
	if err != nil || got.Type != sr.TypeAvro || !strings.Contains(got.Schema, `"name":"User"`) {
		t.Fatalf("by id: %+v %v", got, err)
	}
	found, err := cl.LookupSchema(ctx, subject, sr.Schema{Schema: userV1})
	if err != nil || found.ID != 1 {
		t.Fatalf("lookup: %+v %v", found, err)
	}
	if res, err := cl.CheckCompatibility(ctx, subject, -1, sr.Schema{Schema: userBad}); err != nil || res.Is {
		t.Fatalf("incompatible check: %+v %v", res, err)
	}
	if _, err := cl.CreateSchema(ctx, subject, sr.Schema{Schema: userBad}); err == nil {
		t.Fatal("incompatible schema registered")
	} else {
		var re *sr.ResponseError
		if !errors.As(err, &re) || re.StatusCode != 409 || re.ErrorCode != 40901 {
			t.Fatalf("incompatible: %v", err)
		}
	}
	s2, err := cl.CreateSchema(ctx, subject, sr.Schema{Schema: userV2})
	if err != nil || s2.Version != 2 || s2.ID != 2 {
		t.Fatalf("evolved: %+v %v", s2, err)
	}
	if vs, err := cl.SubjectVersions(ctx, subject); err != nil || fmt.Sprint(vs) != "[1 2]" {
		t.Fatalf("versions %v %v", vs, err)
	}
	if types, err := cl.SupportedTypes(ctx); err != nil || len(types) == 0 {
		t.Fatalf("types %v %v", types, err)
	}
	for _, r := range cl.SetCompatibility(ctx, sr.SetCompatibility{Level: sr.CompatFull}, subject) {
		if r.Err != nil || r.Level != sr.CompatFull {
			t.Fatalf("set compatibility %+v", r)
		}
	}

	// Serde: produce records encoded with schema id 1, consume and decode.
	var serde sr.Serde
	serde.Register(s1.ID, user{},
		sr.EncodeFn(func(v any) ([]byte, error) { return avroUser(v.(user)), nil }),
		sr.DecodeFn(func(b []byte, v any) error {
			u, err := decodeAvroUser(b)
			*(v.(*user)) = u
			return err
		}))
	kcl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr), kgo.ConsumeTopics("users"), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	defer kcl.Close()
	want := []user{{"ada", 36}, {"grace", 45}}
	for _, u := range want {
		v, err := serde.Encode(u)
		if err != nil {
			t.Fatal(err)
		}
		if err := kcl.ProduceSync(ctx, &kgo.Record{Topic: "users", Value: v}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	var gotUsers []user
	for len(gotUsers) < len(want) {
		fs := kcl.PollFetches(ctx)
		if err := fs.Err(); err != nil {
			t.Fatal(err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			var u user
			// The id in the record's header is resolved through the registry
			// as a deserializer does.
			id, _, err := new(sr.ConfluentHeader).DecodeID(r.Value)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := cl.SchemaByID(ctx, id); err != nil {
				t.Fatalf("schema %d of a record: %v", id, err)
			}
			if err := serde.Decode(r.Value, &u); err != nil {
				t.Fatal(err)
			}
			gotUsers = append(gotUsers, u)
		})
	}
	if fmt.Sprint(gotUsers) != fmt.Sprint(want) {
		t.Fatalf("round trip: %v", gotUsers)
	}

	// Deletes, soft then permanent.
	if _, err := cl.DeleteSubject(ctx, subject, sr.SoftDelete); err != nil {
		t.Fatal(err)
	}
	if vs, err := cl.DeleteSubject(ctx, subject, sr.HardDelete); err != nil || len(vs) != 2 {
		t.Fatalf("hard delete: %v %v", vs, err)
	}
	if _, err := cl.SchemaByVersion(ctx, subject, 1); err == nil {
		t.Fatal("version still there")
	}
}

// TestSchemasTopic: the registry creates _schemas compacted with one
// partition, and Kafka clients read its records (JSON keys and values).
func TestSchemasTopic(t *testing.T) {
	t.Parallel()
	b := brokertest.New(t, brokertest.WithSchemaRegistry())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl := newSR(t, b)
	if _, err := cl.CreateSchema(ctx, "t-value", sr.Schema{Schema: `"string"`}); err != nil {
		t.Fatal(err)
	}
	kcl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr), kgo.ConsumeTopics("_schemas"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer kcl.Close()
	adm := kadm.NewClient(kcl)
	cfgs, err := adm.DescribeTopicConfigs(ctx, "_schemas")
	if err != nil {
		t.Fatal(err)
	}
	if c, err := cfgs.On("_schemas", nil); err != nil || !hasConfig(c.Configs, "cleanup.policy", "compact") {
		t.Fatalf("_schemas configs: %+v %v", c, err)
	}
	md, err := adm.ListTopics(ctx, "_schemas")
	if err != nil || len(md["_schemas"].Partitions) != 1 {
		t.Fatalf("_schemas partitions: %+v %v", md, err)
	}
	fs := kcl.PollFetches(ctx)
	if err := fs.Err(); err != nil {
		t.Fatal(err)
	}
	recs := fs.Records()
	if len(recs) != 1 || string(recs[0].Key) != `{"keytype":"SCHEMA","subject":"t-value","version":1,"magic":1}` ||
		string(recs[0].Value) != `{"subject":"t-value","version":1,"id":1,"schemaType":"AVRO","schema":"\"string\"","deleted":false}` {
		for _, r := range recs {
			t.Logf("%s %s", r.Key, r.Value)
		}
		t.Fatal("unexpected _schemas records")
	}
}

func hasConfig(cs []kadm.Config, key, value string) bool {
	for _, c := range cs {
		if c.Key == key && c.Value != nil && *c.Value == value {
			return true
		}
	}
	return false
}

// TestSchemaRegistryRestart: after a restart the registry answers from
// _schemas as before, and new ids continue after the old.
func TestSchemaRegistryRestart(t *testing.T) {
	t.Parallel()
	b := brokertest.New(t, brokertest.WithSchemaRegistry())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl := newSR(t, b)
	for i, s := range []string{`"string"`, `"int"`, `"long"`} {
		got, err := cl.CreateSchema(ctx, fmt.Sprintf("s%d", i), sr.Schema{Schema: s})
		if err != nil || got.ID != i+1 {
			t.Fatalf("create %d: %+v %v", i, got, err)
		}
	}
	url := b.SchemaRegistryURL
	b.Restart()
	if b.SchemaRegistryURL != url {
		t.Fatalf("registry moved from %s to %s", url, b.SchemaRegistryURL)
	}
	cl = newSR(t, b)
	got, err := cl.SchemaByID(ctx, 2)
	if err != nil || got.Schema != `"int"` {
		t.Fatalf("id 2 after restart: %+v %v", got, err)
	}
	next, err := cl.CreateSchema(ctx, "s4", sr.Schema{Schema: `"double"`})
	if err != nil || next.ID != 4 {
		t.Fatalf("next id after restart: %+v %v", next, err)
	}
}

// TestSchemaRegistryOff: without schema.registry.listeners there is no
// registry and no _schemas topic.
func TestSchemaRegistryOff(t *testing.T) {
	t.Parallel()
	b := brokertest.New(t)
	if b.SchemaRegistryURL != "" || len(b.Server.SchemaRegistryAddrs()) != 0 {
		t.Fatalf("registry on: %q", b.SchemaRegistryURL)
	}
	kcl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr))
	if err != nil {
		t.Fatal(err)
	}
	defer kcl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	md, err := kadm.NewClient(kcl).ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if md.Has("_schemas") {
		t.Fatal("_schemas created with the registry off")
	}
}

// srDo sends one request to the registry.
func srDo(t *testing.T, client *http.Client, method, url, body string, auth ...string) (int, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/vnd.schemaregistry.v1+json")
	if len(auth) == 2 {
		req.SetBasicAuth(auth[0], auth[1])
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func registerBody(schema string) string {
	b, _ := json.Marshal(map[string]string{"schema": schema})
	return string(b)
}

// TestSchemaRegistryReferencesRealFormats: references resolve in each real
// format (an Avro named type, a .proto import, a JSON Schema $ref), the
// referenced versions list their referrers, and deleting them is refused
// while referenced.
func TestSchemaRegistryReferencesRealFormats(t *testing.T) {
	t.Parallel()
	b := brokertest.New(t, brokertest.WithSchemaRegistry())
	cl := newSR(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cases := []struct {
		typ             sr.SchemaType
		base, ref, user string
	}{
		{sr.TypeAvro, `{"type":"record","name":"Address","namespace":"test","fields":[{"name":"city","type":"string"}]}`,
			"test.Address", `{"type":"record","name":"Person","namespace":"test","fields":[{"name":"home","type":"test.Address"}]}`},
		{sr.TypeProtobuf, "syntax = \"proto3\";\npackage test;\nmessage Address { string city = 1; }\n",
			"address.proto", "syntax = \"proto3\";\npackage test;\nimport \"address.proto\";\nmessage Person { Address home = 1; }\n"},
		{sr.TypeJSON, `{"$id":"http://example.com/address.json","type":"object","properties":{"city":{"type":"string"}}}`,
			"http://example.com/address.json", `{"type":"object","properties":{"home":{"$ref":"http://example.com/address.json"}}}`},
	}
	for _, c := range cases {
		base, person := "addr-"+c.typ.String(), "person-"+c.typ.String()
		b1, err := cl.CreateSchema(ctx, base, sr.Schema{Type: c.typ, Schema: c.base})
		if err != nil {
			t.Fatalf("%s base: %v", c.typ, err)
		}
		p1, err := cl.CreateSchema(ctx, person, sr.Schema{Type: c.typ, Schema: c.user,
			References: []sr.SchemaReference{{Name: c.ref, Subject: base, Version: b1.Version}}})
		if err != nil {
			t.Fatalf("%s with a reference: %v", c.typ, err)
		}
		status, body := srDo(t, http.DefaultClient, "GET", fmt.Sprintf("%s/subjects/%s/versions/1/referencedby", b.SchemaRegistryURL, base), "")
		if status != 200 || body != fmt.Sprintf("[%d]", p1.ID) {
			t.Fatalf("%s referencedby: %d %s", c.typ, status, body)
		}
		var re *sr.ResponseError
		if _, err := cl.DeleteSubject(ctx, base, sr.SoftDelete); !errors.As(err, &re) || re.ErrorCode != 42206 {
			t.Fatalf("%s delete of a referenced subject: %v", c.typ, err)
		}
		// Without the reference the schema does not parse.
		if _, err := cl.CreateSchema(ctx, person+"-noref", sr.Schema{Type: c.typ, Schema: c.user}); err == nil {
			t.Fatalf("%s parsed without its reference", c.typ)
		}
	}
}
