package raftmeta

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/hashicorp/raft"
)

// BenchmarkOpenEmpty measures Open on an empty dir: log store creation,
// raft bootstrap, self-election and the bootstrap command (Close excluded).
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

// BenchmarkStoreLogs measures one synced single-entry StoreLogs on disk,
// as raft writes each metadata command: the file store against the pebble
// store it replaced.
func BenchmarkStoreLogs(b *testing.B) {
	for _, tc := range []struct {
		name string
		open func(dir string) (contractStore, error)
	}{
		{"file", func(dir string) (contractStore, error) { return openFileStore(dir, nil, nil) }},
		{"pebble", func(dir string) (contractStore, error) { return openPebbleStore(dir, nil, nil) }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			s, err := tc.open(filepath.Join(b.TempDir(), "log"))
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			l := testLog(1)
			l.Data = make([]byte, 200)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				l.Index = uint64(i + 1)
				if err := s.StoreLogs([]*raft.Log{l}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkOpenExisting measures a restart: Open on a copy of a dir with 50
// topics (log store replay, raft start, self-election, barrier). The copy
// keeps every iteration on the same log; Close is excluded.
func BenchmarkOpenExisting(b *testing.B) {
	template := b.TempDir()
	s, err := Open(Config{Dir: template, NodeID: 1})
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < 50; i++ {
		if _, err := s.CreateTopic(context.Background(), "t"+strconv.Itoa(i), 3, []int32{1}, nil); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		dir := filepath.Join(b.TempDir(), "meta")
		if err := os.CopyFS(dir, os.DirFS(template)); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
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
