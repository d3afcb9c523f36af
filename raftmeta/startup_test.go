package raftmeta

import (
	"testing"

	"github.com/cockroachdb/pebble/vfs"
	"github.com/hashicorp/raft"
)

func bootstrapConfig() (*raft.Config, raft.Transport, raft.Configuration) {
	conf := raft.DefaultConfig()
	conf.LocalID = "1"
	addr, trans := raft.NewInmemTransport("inmem-1")
	return conf, trans, raft.Configuration{Servers: []raft.Server{{Suffrage: raft.Voter, ID: "1", Address: addr}}}
}

// TestBootstrapAtomic: the first-start state is all durable or all absent,
// never a term without a configuration.
func TestBootstrapAtomic(t *testing.T) {
	for _, tc := range []struct {
		name  string
		crash bool // lose power before anything of the bootstrap is synced
	}{
		{"synced", false},
		{"crash before sync", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := vfs.NewStrictMem()
			s := mustOpenFile(t, fs)
			conf, trans, cfg := bootstrapConfig()
			if tc.crash {
				fs.SetIgnoreSyncs(true)
			}
			if err := s.bootstrap(conf, trans, cfg); err != nil {
				t.Fatalf("bootstrap: %v", err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			fs.ResetToSyncedState()
			fs.SetIgnoreSyncs(false)
			s = mustOpenFile(t, fs)
			t.Cleanup(func() { s.Close() })

			existing, err := raft.HasExistingState(s, s, raft.NewInmemSnapshotStore())
			if err != nil {
				t.Fatal(err)
			}
			if existing == tc.crash {
				t.Fatalf("existing state after restart = %v, want %v", existing, !tc.crash)
			}
			term, err := s.GetUint64(keyCurrentTerm)
			if err != nil {
				t.Fatal(err)
			}
			last, err := s.LastIndex()
			if err != nil {
				t.Fatal(err)
			}
			if tc.crash {
				if term != 0 || last != 0 {
					t.Fatalf("after a lost bootstrap: term %d, last index %d; want an empty store", term, last)
				}
				// A start after the lost bootstrap simply bootstraps again.
				if err := s.bootstrap(conf, trans, cfg); err != nil {
					t.Fatalf("second bootstrap: %v", err)
				}
				return
			}
			if term != 1 || last != 1 {
				t.Fatalf("term %d, last index %d; want 1, 1", term, last)
			}
			var l raft.Log
			if err := s.GetLog(1, &l); err != nil {
				t.Fatal(err)
			}
			if l.Type != raft.LogConfiguration || l.Term != 1 {
				t.Fatalf("entry 1 = type %v term %d, want a term-1 configuration", l.Type, l.Term)
			}
			if got := raft.DecodeConfiguration(l.Data); len(got.Servers) != 1 || got.Servers[0] != cfg.Servers[0] {
				t.Fatalf("configuration = %+v, want %+v", got, cfg)
			}
		})
	}
}

// TestBootstrapInvalidConfiguration: raft's own validation still applies.
func TestBootstrapInvalidConfiguration(t *testing.T) {
	s := mustOpenFile(t, vfs.NewStrictMem())
	t.Cleanup(func() { s.Close() })
	conf, trans, _ := bootstrapConfig()
	if err := s.bootstrap(conf, trans, raft.Configuration{}); err == nil {
		t.Fatal("bootstrap with no voters succeeded")
	}
	if last, _ := s.LastIndex(); last != 0 {
		t.Fatalf("a refused bootstrap wrote entries up to %d", last)
	}
}

// TestLazyStable: a lone voter's unsynced term/vote becomes durable with the
// next synced log write, and only an unsynced tail is lost in a crash.
func TestLazyStable(t *testing.T) {
	for _, tc := range []struct {
		name      string
		lazy      bool
		thenLog   bool // a synced StoreLogs follows the Set
		clean     bool // a clean Close instead of a crash
		wantValue bool // the Set survives
	}{
		{"synced set", false, false, false, true},
		{"lazy set then synced log", true, true, false, true},
		{"lazy set alone", true, false, false, false},
		{"lazy set then clean close", true, false, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := vfs.NewStrictMem()
			s := mustOpenFile(t, fs)
			s.lazyStable = tc.lazy
			if err := s.SetUint64(keyCurrentTerm, 7); err != nil {
				t.Fatal(err)
			}
			// Readers see a lazy value at once.
			if v, err := s.GetUint64(keyCurrentTerm); err != nil || v != 7 {
				t.Fatalf("term before crash = %d, %v; want 7", v, err)
			}
			if tc.thenLog {
				if err := s.StoreLogs([]*raft.Log{testLog(1)}); err != nil {
					t.Fatal(err)
				}
			}
			if tc.clean {
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
				fs.ResetToSyncedState()
				s = mustOpenFile(t, fs)
			} else {
				s = crash(t, fs, s)
			}
			t.Cleanup(func() { s.Close() })
			got, err := s.GetUint64(keyCurrentTerm)
			if err != nil {
				t.Fatal(err)
			}
			if want := map[bool]uint64{true: 7, false: 0}[tc.wantValue]; got != want {
				t.Fatalf("term after crash = %d, want %d", got, want)
			}
		})
	}
}

// TestCrashRightAfterOpen: a lone voter that loses power straight after
// Open (its election's term and vote written lazily) restarts with the
// same metadata, again and again.
func TestCrashRightAfterOpen(t *testing.T) {
	fs := vfs.NewStrictMem()
	cfg := Config{Dir: t.TempDir(), NodeID: 1}
	var clusterID string
	for i := range 3 {
		s, err := open(cfg, openOptions{fs: fs})
		if err != nil {
			t.Fatalf("open %d: %v", i, err)
		}
		img := s.Image()
		if i == 0 {
			clusterID = img.ClusterID
		}
		if img.ClusterID == "" || img.ClusterID != clusterID {
			t.Fatalf("open %d: cluster id %q, want %q", i, img.ClusterID, clusterID)
		}
		fs.SetIgnoreSyncs(true)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		fs.ResetToSyncedState()
		fs.SetIgnoreSyncs(false)
	}
}

// TestRegisterBrokerUnchanged: re-registering the same endpoint on a lone
// voter writes nothing; a changed one is proposed.
func TestRegisterBrokerUnchanged(t *testing.T) {
	s := newStore(t, Config{Dir: t.TempDir(), NodeID: 1})
	ctx := testCtx(t)
	b := Broker{NodeID: 1, Host: "localhost", Port: 9092, Rack: "r"}
	if err := s.RegisterBroker(ctx, b); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		b       Broker
		written bool
	}{
		{"same", b, false},
		{"new port", Broker{NodeID: 1, Host: "localhost", Port: 9093, Rack: "r"}, true},
		{"new rack", Broker{NodeID: 1, Host: "localhost", Port: 9093, Rack: "r2"}, true},
		{"same again", Broker{NodeID: 1, Host: "localhost", Port: 9093, Rack: "r2"}, false},
		{"other node", Broker{NodeID: 2, Host: "h2", Port: 9092}, true},
	} {
		before := s.Image()
		if err := s.RegisterBroker(ctx, tc.b); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		after := s.Image()
		if written := after.AppliedIndex != before.AppliedIndex; written != tc.written {
			t.Fatalf("%s: wrote an entry = %v, want %v", tc.name, written, tc.written)
		}
		if after.Brokers[tc.b.NodeID] != tc.b {
			t.Fatalf("%s: image holds %+v, want %+v", tc.name, after.Brokers[tc.b.NodeID], tc.b)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.RegisterBroker(ctx, b); err == nil {
		t.Fatal("RegisterBroker after Close succeeded")
	}
}
