package raftmeta

import (
	"context"
	"testing"
)

func TestClientQuotasStoredAndSnapshotted(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(Config{Dir: dir, NodeID: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	user := []QuotaEntity{{Type: "user", Name: "al&ice=1"}, {Type: "client-id", Default: true}}
	if err := s.AlterClientQuotas(ctx, user, map[string]string{"producer_byte_rate": "1024", "request_percentage": "50.5"}, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.AlterClientQuotas(ctx, user, nil, []string{"request_percentage"}); err != nil {
		t.Fatal(err)
	}
	key := QuotaEntityKey(user)
	if key != "client-id&user=al%26ice%3D1" {
		t.Errorf("key %q", key)
	}
	if got := ParseQuotaEntityKey(key); len(got) != 2 || got[1] != user[0] || got[0] != user[1] {
		t.Errorf("parsed %+v", got)
	}
	if q := s.Image().ClientQuotas[key]; len(q) != 1 || q["producer_byte_rate"] != "1024" {
		t.Fatalf("quotas %v", s.Image().ClientQuotas)
	}
	// Through a snapshot (version 2) and back.
	img, err := decodeImage(encodeImage(s.Image()))
	if err != nil || img.ClientQuotas[key]["producer_byte_rate"] != "1024" {
		t.Fatalf("snapshot: %v %v", err, img)
	}
	if b := encodeImage(emptyImage()); b[4] != imageVersionV1 {
		t.Errorf("an image without quotas is written as version %d", b[4])
	}
	s.Close()
	if s, err = Open(Config{Dir: dir, NodeID: 1}); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if q := s.Image().ClientQuotas[key]; q["producer_byte_rate"] != "1024" {
		t.Fatalf("after restart: %v", s.Image().ClientQuotas)
	}
}

func TestClientMetricsStoredAndSnapshotted(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(Config{Dir: dir, NodeID: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := s.AlterClientMetrics(ctx, "sub", map[string]string{"metrics": "org.apache.kafka.producer.", "interval.ms": "1000", "match": "client_id=app.*"}, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.AlterClientMetrics(ctx, "gone", map[string]string{"interval.ms": "1000"}, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.AlterClientMetrics(ctx, "gone", nil, []string{"interval.ms"}); err != nil {
		t.Fatal(err)
	}
	if err := s.AlterClientMetrics(ctx, "", map[string]string{"interval.ms": "1000"}, nil); err == nil {
		t.Error("an unnamed subscription was stored")
	}
	if m := s.Image().ClientMetrics; len(m) != 1 || m["sub"]["interval.ms"] != "1000" {
		t.Fatalf("client metrics %v", m)
	}
	b := encodeImage(s.Image())
	if b[4] != imageVersionV4 {
		t.Errorf("an image with client metrics is written as version %d", b[4])
	}
	img, err := decodeImage(b)
	if err != nil || img.ClientMetrics["sub"]["match"] != "client_id=app.*" {
		t.Fatalf("snapshot: %v %v", err, img)
	}
	s.Close()
	if s, err = Open(Config{Dir: dir, NodeID: 1}); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if m := s.Image().ClientMetrics["sub"]; m["metrics"] != "org.apache.kafka.producer." {
		t.Fatalf("after restart: %v", s.Image().ClientMetrics)
	}
}
