package raftmeta

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/vfs"
	"github.com/hashicorp/raft"
)

// TestFileStoreTailDescribed: the log says what a cut tail was. A write a
// crash interrupted (the file ends inside the record, or in zeros) is a
// warning that names it as unfinished; a complete final record that fails
// its checksum is an error naming it corrupt, with the last good index, not
// "an unfinished write" (which every tail used to be called). Corruption
// with good records after it is refused (TestFileStoreMidFileCorruption).
func TestFileStoreTailDescribed(t *testing.T) {
	fs := vfs.NewMem()
	s := mustOpenFile(t, fs)
	storeRange(t, s, 1, 10)
	before := readTestFile(t, fs, testWAL)
	if err := s.StoreLogs([]*raft.Log{testLog(11), testLog(12)}); err != nil {
		t.Fatal(err)
	}
	after := readTestFile(t, fs, testWAL)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	damaged := bytes.Clone(after)
	damaged[len(damaged)-3] ^= 0x40
	cases := []struct {
		name  string
		data  []byte
		level string
		what  string
	}{
		{"cut inside the last record", after[:len(after)-5], "WARN", "an unfinished write: the file ends"},
		{"cut inside its header", after[:len(before)+4], "WARN", "an unfinished write: a partial record header"},
		{"zero-filled tail", append(bytes.Clone(before), make([]byte, len(after)-len(before))...), "WARN", "zero-filled"},
		{"last record damaged", damaged, "ERROR", "a corrupt final record: complete, but its checksum does not match"},
		{"zeros after the last record", append(bytes.Clone(after), make([]byte, 30)...), "WARN", "zero-filled"},
		{"damaged last record, then zeros", append(bytes.Clone(damaged), make([]byte, 30)...), "ERROR", "unreadable bytes after it"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fs := vfs.NewMem()
			writeTestFile(t, fs, testWAL, tc.data)
			var logBuf bytes.Buffer
			s, err := openFileStore(testDir, fs, slog.New(slog.NewTextHandler(&logBuf, nil)))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			log := logBuf.String()
			if !strings.Contains(log, "level="+tc.level) || !strings.Contains(log, tc.what) {
				t.Fatalf("log %q, want a %s saying %q", log, tc.level, tc.what)
			}
			if tc.level == "ERROR" && !strings.Contains(log, "last_good_index=") {
				t.Fatalf("log %q names no last good index", log)
			}
		})
	}
}
