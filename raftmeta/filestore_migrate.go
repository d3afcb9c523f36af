package raftmeta

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/cockroachdb/pebble/vfs"
)

// migrate copies the pebble store of an older version into a new raft.wal
// and then removes the pebble files. Until the rename of raft.wal is
// durable, the pebble store stays authoritative and untouched (apart from
// pebble's own open), so a crash just migrates again.
func (s *fileStore) migrate() error {
	start := time.Now()
	ps, err := openPebbleStore(s.dir, s.fs, s.logger)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	st, err := ps.export()
	if cerr := ps.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("close pebble raft store %s: %w", s.dir, cerr)
	}
	if err != nil {
		return fmt.Errorf("migrate raft log store %s: %w", s.dir, err)
	}
	s.st = st
	if err := s.install(); err != nil {
		return fmt.Errorf("migrate raft log store %s: %w", s.dir, err)
	}
	// List now: pebble's open wrote new files.
	names, err := s.fs.List(s.dir)
	if err != nil {
		return fmt.Errorf("list %s: %w", s.dir, err)
	}
	if err := removePebbleFiles(s.fs, s.dir, names); err != nil {
		return err
	}
	s.logger.Info("migrated raft log store from pebble", "dir", s.dir, "entries", len(st.entries),
		"first", st.first, "stable_keys", len(st.stable), "took", time.Since(start))
	return nil
}

// pebble's file names (v1.1): CURRENT, LOCK, MANIFEST-*, OPTIONS-*,
// marker.*, *.log, *.sst, temporary *.dbtmp.
func isPebbleFile(name string) bool {
	switch {
	case name == "CURRENT", name == "LOCK",
		strings.HasPrefix(name, "MANIFEST-"), strings.HasPrefix(name, "OPTIONS-"),
		strings.HasPrefix(name, "marker."),
		strings.HasSuffix(name, ".log"), strings.HasSuffix(name, ".sst"),
		strings.HasSuffix(name, ".dbtmp"):
		return true
	}
	return false
}

func hasPebbleFiles(names []string) bool { return slices.ContainsFunc(names, isPebbleFile) }

// hasPebbleDB: a pebble store that may hold data. Without CURRENT (or its
// marker) pebble never acknowledged a write.
func hasPebbleDB(names []string) bool {
	return slices.ContainsFunc(names, func(n string) bool {
		return n == "CURRENT" || strings.HasPrefix(n, "marker.manifest.")
	})
}

func removePebbleFiles(fs vfs.FS, dir string, names []string) error {
	removed := 0
	for _, n := range names {
		if !isPebbleFile(n) {
			continue
		}
		if err := fs.Remove(fs.PathJoin(dir, n)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("remove migrated pebble file %s: %w", fs.PathJoin(dir, n), err)
		}
		removed++
	}
	if removed == 0 {
		return nil
	}
	return syncDir(fs, dir)
}
