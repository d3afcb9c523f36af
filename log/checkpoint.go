package log

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// A partition directory's small files beside its segments: Kafka-format
// checkpoints and the clean shutdown marker, each replaced atomically
// (writeFileAtomic).
const (
	epochCheckpointName = "leader-epoch-checkpoint"
	// logStartCheckpointName holds the log start offset moved by
	// DeleteRecords, in Kafka's checkpoint text format (version 0, count 1,
	// one offset line). Kafka keeps one such file per log dir; a file per
	// partition keeps partitions independent.
	logStartCheckpointName = "log-start-offset-checkpoint"
	// recoveryPointName holds the base offset of the first segment that
	// may not be fully fsynced (Kafka's recovery-point-offset-checkpoint,
	// per partition). Segments below it are trusted after a crash; the
	// ones from it on are scanned completely.
	recoveryPointName = "recovery-point-offset-checkpoint"
	// cleanShutdownName marks a partition closed cleanly: its active index
	// files are complete and a producer snapshot at the log end exists.
	cleanShutdownName = ".clean-shutdown"
)

// cleanShutdownContent is the marker's body: magic "SQCS" and version 1.
var cleanShutdownContent = []byte{'S', 'Q', 'C', 'S', 1}

func (l *Log) filePath(name string) string { return filepath.Join(l.dir, name) }

func (l *Log) removeFile(name string) {
	if err := l.fs.Remove(l.filePath(name)); err != nil && !isNotExist(err) {
		l.logger.Warn("cannot remove file", "file", l.filePath(name), "err", err)
	}
}

func (l *Log) readSmallFile(name string) ([]byte, error) {
	f, err := l.fs.OpenFile(l.filePath(name), os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := readWhole(f)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", l.filePath(name), err)
	}
	return b, nil
}

// writeFileAtomic replaces name with data: write a tmp file, fsync it,
// rename it over name, fsync the directory.
func (l *Log) writeFileAtomic(name string, data []byte) error {
	tmp := l.filePath(name + tmpSuffix)
	f, err := l.fs.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_RDWR, 0o644)
	if err != nil {
		return fmt.Errorf("%w: create %s: %w", ErrStorage, tmp, err)
	}
	if _, err := f.WriteAt(data, 0); err != nil {
		f.Close()
		return fmt.Errorf("%w: write %s: %w", ErrStorage, tmp, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("%w: sync %s: %w", ErrStorage, tmp, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("%w: close %s: %w", ErrStorage, tmp, err)
	}
	if err := l.fs.Rename(tmp, l.filePath(name)); err != nil {
		return fmt.Errorf("%w: rename %s: %w", ErrStorage, tmp, err)
	}
	if err := l.fs.SyncDir(l.dir); err != nil {
		return fmt.Errorf("%w: sync %s: %w", ErrStorage, l.dir, err)
	}
	return nil
}

func (l *Log) writeEpochCheckpoint(c epochCache) error {
	return l.writeFileAtomic(epochCheckpointName, c.encode())
}

func (l *Log) readLogStartCheckpoint() (int64, error) {
	return l.readOffsetCheckpoint(logStartCheckpointName)
}

// readOffsetCheckpoint reads a one-offset file in Kafka's checkpoint text
// format (version 0, count 1, the offset); a missing file reads as 0.
func (l *Log) readOffsetCheckpoint(name string) (int64, error) {
	data, err := l.readSmallFile(name)
	if isNotExist(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	v, err := decodeOffsetCheckpoint(data)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", name, err)
	}
	return v, nil
}

// decodeOffsetCheckpoint parses a one-offset checkpoint: "0\n1\n<offset>\n"
// (Kafka's checkpoint text format; also the cleaner's swap marker).
func decodeOffsetCheckpoint(data []byte) (int64, error) {
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) != 3 || lines[0] != "0" || lines[1] != "1" {
		return 0, fmt.Errorf("unexpected content %q", data)
	}
	v, err := strconv.ParseInt(lines[2], 10, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("bad offset %q", lines[2])
	}
	return v, nil
}

func (l *Log) writeOffsetCheckpoint(name string, offset int64) error {
	return l.writeFileAtomic(name, []byte("0\n1\n"+strconv.FormatInt(offset, 10)+"\n"))
}

func (l *Log) writeLogStartCheckpoint(offset int64) error {
	return l.writeOffsetCheckpoint(logStartCheckpointName, offset)
}
