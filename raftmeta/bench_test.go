package raftmeta

import (
	"context"
	"strconv"
	"testing"
)

// BenchmarkOpenEmpty measures Open on an empty dir: pebble creation, raft
// bootstrap, self-election and the bootstrap command (Close excluded).
func BenchmarkOpenEmpty(b *testing.B) {
	for i := 0; i < b.N; i++ {
		dir := b.TempDir()
		s, err := Open(Config{Dir: dir, NodeID: 1})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

// BenchmarkCreateTopic measures one CreateTopic end to end on a single
// node: encode, synced raft append, apply, publish.
func BenchmarkCreateTopic(b *testing.B) {
	s, err := Open(Config{Dir: b.TempDir(), NodeID: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := s.CreateTopic(ctx, "bench-"+strconv.Itoa(i), 3, []int32{1}, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkImage is the read path every request handler takes.
func BenchmarkImage(b *testing.B) {
	s, err := Open(Config{Dir: b.TempDir(), NodeID: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if s.Image().Topics == nil {
			b.Fatal("nil topics")
		}
	}
}
