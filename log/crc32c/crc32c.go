// Package crc32c is the one CRC-32C (Castagnoli) of sharq's formats: the
// v2 record batch (sharq/log/recordbatch), the producer-state snapshots
// (sharq/log), the state journal (sharq/log/statejournal), raft's log and
// the metadata snapshots (sharq/raftmeta) and the client-metrics
// subscription ids (sharq/raftmeta/clientmetrics). It is a leaf package
// importing only the standard library, like log/clock, so that every
// package may use it without importing log.
package crc32c

import "hash/crc32"

// table is the standard library's (hardware-accelerated where it can be)
// Castagnoli table.
var table = crc32.MakeTable(crc32.Castagnoli)

// Checksum is the CRC-32C of b.
func Checksum(b []byte) uint32 { return crc32.Checksum(b, table) }
