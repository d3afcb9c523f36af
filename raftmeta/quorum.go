package raftmeta

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/raft"
)

// QuorumReplica is one voter as DescribeQuorum reports it. Offsets are
// Kafka's: raft index i is offset i-1, so the log end offset is the last
// index. -1 is "unknown", as Kafka reports a replica it has not heard from.
type QuorumReplica struct {
	NodeID         int32
	DirectoryID    UUID   // zero when unknown
	Addr           string // raft address; "" for a single node's in-memory transport
	LogEndOffset   int64
	LastFetchMs    int64
	LastCaughtUpMs int64
}

// Quorum is the metadata quorum's state for DescribeQuorum.
type Quorum struct {
	LeaderID      int32 // -1 while there is none
	LeaderEpoch   int32 // the raft term
	HighWatermark int64 // the commit index
	Voters        []QuorumReplica
}

// Quorum describes the metadata quorum as seen from this node. Only the
// leader knows how far followers are, and hashicorp/raft keeps that to
// itself, so other voters' log end offsets and timestamps are -1; this node
// is always current.
func (s *Store) Quorum() (Quorum, error) {
	q := Quorum{LeaderID: -1, LeaderEpoch: int32(s.raft.CurrentTerm()), HighWatermark: int64(s.raft.CommitIndex())}
	if _, id := s.raft.LeaderWithID(); id != "" {
		n, err := strconv.ParseInt(string(id), 10, 32)
		if err != nil {
			return q, fmt.Errorf("raft leader id %q: %w", id, err)
		}
		q.LeaderID = int32(n)
	}
	f := s.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return q, fmt.Errorf("raft configuration: %w", mapRaftErr(err))
	}
	now := time.Now().UnixMilli()
	for _, srv := range f.Configuration().Servers {
		if srv.Suffrage != raft.Voter {
			continue
		}
		n, err := strconv.ParseInt(string(srv.ID), 10, 32)
		if err != nil {
			return q, fmt.Errorf("raft server id %q: %w", srv.ID, err)
		}
		r := QuorumReplica{NodeID: int32(n), LogEndOffset: -1, LastFetchMs: -1, LastCaughtUpMs: -1}
		if len(s.cfg.Voters) > 0 {
			r.Addr = string(srv.Address)
		}
		if r.NodeID == s.cfg.NodeID {
			r.LogEndOffset, r.LastFetchMs, r.LastCaughtUpMs = int64(s.raft.LastIndex()), now, now
			r.DirectoryID = s.dirID
		}
		q.Voters = append(q.Voters, r)
	}
	slices.SortFunc(q.Voters, func(a, b QuorumReplica) int { return int(a.NodeID - b.NodeID) })
	return q, nil
}

// loadDirectoryID reads the metadata directory's id, creating it on first
// start, as Kafka keeps a directory.id in each log directory's
// meta.properties.
func loadDirectoryID(dir string) (UUID, error) {
	path := filepath.Join(dir, "directory.id")
	b, err := os.ReadFile(path)
	if err == nil {
		var id UUID
		raw, derr := base64.RawURLEncoding.DecodeString(strings.TrimSpace(string(b)))
		if derr != nil || len(raw) != len(id) {
			return id, fmt.Errorf("%s holds %q, not a directory id", path, strings.TrimSpace(string(b)))
		}
		copy(id[:], raw)
		return id, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return UUID{}, fmt.Errorf("read %s: %w", path, err)
	}
	id := newTopicID()
	if err := os.WriteFile(path+".tmp", []byte(id.String()+"\n"), 0o644); err != nil {
		return UUID{}, fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		return UUID{}, fmt.Errorf("write %s: %w", path, err)
	}
	return id, nil
}
