package log

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// TopicID is the topic's UUID; the zero value means unknown (not checked).
type TopicID [16]byte

// String is Kafka's Uuid.toString: URL-safe base64 without padding.
func (id TopicID) String() string { return base64.RawURLEncoding.EncodeToString(id[:]) }

// partitionMetadataName is Kafka's per-partition file naming the topic id
// the directory belongs to (PartitionMetadataFile), so that a directory of
// a deleted topic is never served as a new topic of the same name.
const partitionMetadataName = "partition.metadata"

// strayDirSuffix marks a partition directory set aside because it belongs
// to another topic id (Kafka's <topic>-<partition>.<id>-stray).
const strayDirSuffix = "-stray"

// encodePartitionMetadata is Kafka's format: "version: 0\ntopic_id: <id>"
// (PartitionMetadataFileFormatter; no trailing newline).
func encodePartitionMetadata(id TopicID) []byte {
	return []byte("version: 0\ntopic_id: " + id.String())
}

// decodePartitionMetadata reads the file as Kafka does: lines "key: value"
// (any whitespace after the colon), version 0 first, then topic_id.
func decodePartitionMetadata(data []byte) (TopicID, error) {
	var id TopicID
	lines := strings.Split(strings.TrimRight(string(data), "\r\n"), "\n")
	if len(lines) < 2 {
		return id, fmt.Errorf("%s: %d lines, want version and topic_id", partitionMetadataName, len(lines))
	}
	field := func(line, key string) (string, error) {
		k, v, ok := strings.Cut(strings.TrimRight(line, "\r"), ":")
		if !ok || k != key {
			return "", fmt.Errorf("%s: line %q, want %q", partitionMetadataName, line, key+": ...")
		}
		return strings.TrimSpace(v), nil
	}
	v, err := field(lines[0], "version")
	if err != nil {
		return id, err
	}
	if v != "0" {
		return id, fmt.Errorf("%s: unknown version %q", partitionMetadataName, v)
	}
	s, err := field(lines[1], "topic_id")
	if err != nil {
		return id, err
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) != len(id) {
		return id, fmt.Errorf("%s: bad topic id %q", partitionMetadataName, s)
	}
	copy(id[:], b)
	return id, nil
}

// checkTopicID makes sure the partition directory dir (if it exists)
// belongs to topic id: a directory of another id (a topic deleted while
// this node missed it, then re-created) is set aside as
// <dir>.<its id in hex>-stray, never served, and logged. It reports
// whether partition.metadata must be written (new directory or sharq data
// from before the file).
func (m *Manager) checkTopicID(dir string, id TopicID) (write bool, err error) {
	if id == (TopicID{}) {
		return false, nil
	}
	if _, err := m.fs.ReadDir(dir); err != nil {
		if isNotExist(err) {
			return true, nil
		}
		return false, fmt.Errorf("%w: list %s: %w", ErrStorage, dir, err)
	}
	name := filepath.Join(dir, partitionMetadataName)
	f, err := m.fs.OpenFile(name, os.O_RDONLY, 0)
	if isNotExist(err) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("%w: open %s: %w", ErrStorage, name, err)
	}
	data, err := readWhole(f)
	f.Close()
	if err != nil {
		return false, fmt.Errorf("%w: read %s: %w", ErrStorage, name, err)
	}
	have, err := decodePartitionMetadata(data)
	if err != nil {
		// Written atomically, so this is damage, not a torn write: do not
		// guess which topic the data belongs to.
		return false, fmt.Errorf("%w: %s: %w", ErrStorage, name, err)
	}
	if have == id {
		return false, nil
	}
	stray := dir + "." + hex.EncodeToString(have[:]) + strayDirSuffix
	if _, err := m.fs.ReadDir(stray); err == nil {
		stray = dir + "." + hex.EncodeToString(have[:]) + "." + fmt.Sprint(m.now().UnixNano()) + strayDirSuffix
	}
	if err := m.fs.Rename(dir, stray); err != nil {
		return false, fmt.Errorf("%w: set aside %s: %w", ErrStorage, dir, err)
	}
	if err := m.fs.SyncDir(m.dir); err != nil {
		return false, fmt.Errorf("%w: sync %s: %w", ErrStorage, m.dir, err)
	}
	m.logger.Warn("set aside a partition directory of another topic id; it is not served (delete it when it is not needed)",
		"dir", dir, "moved_to", stray, "dir_topic_id", have.String(), "topic_id", id.String())
	return true, nil
}

// writePartitionMetadata writes partition.metadata in dir atomically.
func (l *Log) writePartitionMetadata(id TopicID) error {
	return l.writeFileAtomic(partitionMetadataName, encodePartitionMetadata(id))
}
