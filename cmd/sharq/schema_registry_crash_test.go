package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/sr"

	"sharq/broker/brokertest"
)

// TestSchemaRegistryKill9 kills sharq with SIGKILL after schema
// registrations, soft and hard deletes and a config change were answered:
// after a restart every answered registration is there with its id and
// version, the deletes and the config hold, and the next registration gets
// an id never given before (also past the hard-deleted highest one).
func TestSchemaRegistryKill9(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := startSharq(t, dir, "--override", "schema.registry.listeners=http://127.0.0.1:0")
	if p.schemaRegistry == "" {
		t.Fatal("no schema registry in the ready line")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cl, err := sr.NewClient(sr.URLs(p.schemaRegistry))
	if err != nil {
		t.Fatal(err)
	}
	type reg struct{ id, version int }
	want := map[string]reg{}
	const n = 60
	for i := 0; i < n; i++ {
		subject := fmt.Sprintf("s%d", i%6)
		// Each a new record type name, so NONE lets every one register.
		schema := fmt.Sprintf(`{"type":"record","name":"R%d","fields":[{"name":"f","type":"long"}]}`, i)
		if i < 6 {
			for _, r := range cl.SetCompatibility(ctx, sr.SetCompatibility{Level: sr.CompatNone}, subject) {
				if r.Err != nil {
					t.Fatal(r.Err)
				}
			}
		}
		got, err := cl.CreateSchema(ctx, subject, sr.Schema{Schema: schema})
		if err != nil {
			t.Fatalf("register %d: %v", i, err)
		}
		want[fmt.Sprintf("%s/%d", subject, got.Version)] = reg{got.ID, got.Version}
	}
	// The highest id goes for good, a version of s1 softly.
	if _, err := cl.DeleteSubject(ctx, "s5", sr.SoftDelete); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.DeleteSubject(ctx, "s5", sr.HardDelete); err != nil {
		t.Fatal(err)
	}
	if err := cl.DeleteSchema(ctx, "s1", 2, sr.SoftDelete); err != nil {
		t.Fatal(err)
	}

	p.cmd.Process.Kill()
	<-p.exited

	b := brokertest.New(t, brokertest.WithDir(dir), brokertest.WithSchemaRegistry())
	cl2, err := sr.NewClient(sr.URLs(b.SchemaRegistryURL))
	if err != nil {
		t.Fatal(err)
	}
	for key, w := range want {
		var subject string
		var version int
		fmt.Sscanf(key, "s%d/%d", new(int), &version)
		subject = key[:len(key)-len(fmt.Sprintf("/%d", version))]
		got, err := cl2.SchemaByVersion(ctx, subject, version)
		switch {
		case subject == "s5":
			if err == nil {
				t.Fatalf("%s survived its hard delete", key)
			}
			continue
		case subject == "s1" && version == 2:
			if err == nil {
				t.Fatalf("%s survived its soft delete", key)
			}
			// Its id still resolves.
			if _, err := cl2.SchemaByID(ctx, w.id); err != nil {
				t.Fatalf("id %d of soft-deleted %s: %v", w.id, key, err)
			}
			continue
		}
		if err != nil || got.ID != w.id || got.Version != w.version {
			t.Fatalf("%s after kill -9: %+v %v, want %+v", key, got, err, w)
		}
	}
	for _, r := range cl2.Compatibility(ctx, "s0") {
		if r.Err != nil || r.Level != sr.CompatNone {
			t.Fatalf("config after kill -9: %+v", r)
		}
	}
	next, err := cl2.CreateSchema(ctx, "fresh", sr.Schema{Schema: `"string"`})
	if err != nil || next.ID != n+1 {
		t.Fatalf("next id after kill -9: %+v %v, want %d", next, err, n+1)
	}
}
