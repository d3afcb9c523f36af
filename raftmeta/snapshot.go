package raftmeta

// Snapshot format (one raft snapshot file holds one image):
//
//	magic "SQMI" | version(1)=1 | payload | crc32c(payload) (4 bytes, big endian)
//
// payload, in order (wire.go encodings; every collection sorted by key so an
// image always encodes to the same bytes):
//
//	cluster id | applied index uvarint | next producer id varint
//	| features: n, (name, level)*
//	| brokers: n, (node id, host, port, rack)*
//	| topics: n, (name, id[16], configs, partitions: n, (leader, leader epoch,
//	  partition epoch, replicas, isr)*)*
//	| broker configs: n, (entity, configs)* | group configs: n, (group, configs)*
//	version 2 only: | scram: n, (user, mechanism, salt, stored key, server key,
//	  iterations)* | acls: n, (resource type, name, pattern type, principal,
//	  host, operation, permission)*
//	version 3: version 2 | client quotas: n, (quota entity key, values)*
//	version 4: version 3 | client metrics: n, (subscription name, values)*
//
// FORMAT MIGRATION: decodeImage accepts versions 1, 2 (1 + security), 3
// (2 + client quotas) and 4 (3 + client metrics subscriptions). An image is written in the lowest version that holds
// it, so a node that never used security or quotas stays readable by an
// older binary; a higher one is written only once every voter can read it.

import (
	"encoding/binary"
	"fmt"
	"slices"

	"sharq/log/crc32c"
)

const (
	imageMagic     = "SQMI"
	imageVersionV1 = 1
	// imageVersionV2 adds the security sections (SCRAM credentials, ACLs).
	// An image without them is still written as version 1, so a node that
	// never used security stays readable by a binary from before it.
	imageVersionV2 = 2
	// imageVersionV3 adds client quotas.
	imageVersionV3 = 3
	// imageVersionV4 adds client metrics subscriptions (KIP-714).
	imageVersionV4 = 4
)

func encodeImage(img *Image) []byte {
	b := make([]byte, 0, 256)
	b = append(b, imageMagic...)
	version := byte(imageVersionV1)
	switch {
	case len(img.ClientMetrics) > 0:
		version = imageVersionV4
	case len(img.ClientQuotas) > 0:
		version = imageVersionV3
	case len(img.Scram) > 0 || len(img.ACLs) > 0:
		version = imageVersionV2
	}
	b = append(b, version)
	start := len(b)

	b = appendString(b, img.ClusterID)
	b = binary.AppendUvarint(b, img.AppliedIndex)
	b = appendInt(b, img.NextProducerID)
	b = appendFeatures(b, img.Features)

	ids := make([]int32, 0, len(img.Brokers))
	for id := range img.Brokers {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	b = binary.AppendUvarint(b, uint64(len(ids)))
	for _, id := range ids {
		br := img.Brokers[id]
		b = appendInt(b, int64(br.NodeID))
		b = appendString(b, br.Host)
		b = appendInt(b, int64(br.Port))
		b = appendString(b, br.Rack)
	}

	b = binary.AppendUvarint(b, uint64(len(img.Topics)))
	for _, name := range sortedKeys(img.Topics) {
		t := img.Topics[name]
		b = appendString(b, t.Name)
		b = append(b, t.ID[:]...)
		b = appendStringMap(b, t.Configs)
		b = binary.AppendUvarint(b, uint64(len(t.Partitions)))
		for _, p := range t.Partitions {
			b = appendInt(b, int64(p.Leader))
			b = appendInt(b, int64(p.LeaderEpoch))
			b = appendInt(b, int64(p.PartitionEpoch))
			b = appendInt32s(b, p.Replicas)
			b = appendInt32s(b, p.ISR)
		}
	}

	b = appendConfigSet(b, img.BrokerConfigs)
	b = appendConfigSet(b, img.GroupConfigs)
	if version >= imageVersionV2 {
		b = appendSecurity(b, img)
	}
	if version >= imageVersionV3 {
		b = appendConfigSet(b, img.ClientQuotas)
	}
	if version >= imageVersionV4 {
		b = appendConfigSet(b, img.ClientMetrics)
	}

	return binary.BigEndian.AppendUint32(b, crc32c.Checksum(b[start:]))
}

func appendConfigSet(b []byte, m map[string]map[string]string) []byte {
	b = binary.AppendUvarint(b, uint64(len(m)))
	for _, k := range sortedKeys(m) {
		b = appendString(b, k)
		b = appendStringMap(b, m[k])
	}
	return b
}

func (r *reader) configSet() map[string]map[string]string {
	n := r.count(2)
	m := make(map[string]map[string]string, n)
	prev := ""
	for i := 0; i < n && r.err == nil; i++ {
		k := r.string()
		v := r.stringMap()
		if i > 0 && k <= prev {
			r.fail("config entity order")
		}
		prev = k
		if len(v) > 0 {
			m[k] = v
		}
	}
	return m
}

// decodeImage parses a snapshot; any damage is an error wrapping ErrCorrupt.
func decodeImage(data []byte) (*Image, error) {
	hdr := len(imageMagic) + 1
	if len(data) < hdr+4 || string(data[:len(imageMagic)]) != imageMagic {
		return nil, fmt.Errorf("not a metadata snapshot (%d bytes): %w", len(data), ErrCorrupt)
	}
	version := data[len(imageMagic)]
	if version < imageVersionV1 || version > imageVersionV4 {
		return nil, fmt.Errorf("metadata snapshot version %d, this binary reads %d to %d: %w", version, imageVersionV1, imageVersionV4, ErrCorrupt)
	}
	payload := data[hdr : len(data)-4]
	if got, want := crc32c.Checksum(payload), binary.BigEndian.Uint32(data[len(data)-4:]); got != want {
		return nil, fmt.Errorf("metadata snapshot checksum %08x, stored %08x: %w", got, want, ErrCorrupt)
	}

	r := reader{b: payload}
	img := emptyImage()
	img.ClusterID = r.string()
	img.AppliedIndex = r.uvarint()
	img.NextProducerID = r.varint()
	if f := r.features(); f != nil {
		img.Features = f
	}

	nb := r.count(4)
	for i := 0; i < nb && r.err == nil; i++ {
		br := Broker{NodeID: r.int32(), Host: r.string(), Port: r.int32(), Rack: r.string()}
		if _, dup := img.Brokers[br.NodeID]; dup {
			r.fail("duplicate broker")
		}
		img.Brokers[br.NodeID] = br
	}

	nt := r.count(20)
	for i := 0; i < nt && r.err == nil; i++ {
		t := &Topic{Name: r.string(), ID: r.uuid(), Configs: r.stringMap()}
		np := r.count(5)
		if np > 0 {
			t.Partitions = make([]Partition, np)
		}
		for p := range t.Partitions {
			t.Partitions[p] = Partition{
				Leader:         r.int32(),
				LeaderEpoch:    r.int32(),
				PartitionEpoch: r.int32(),
				Replicas:       r.int32s(),
				ISR:            r.int32s(),
			}
		}
		if r.err != nil {
			break
		}
		_, dupName := img.Topics[t.Name]
		_, dupID := img.TopicsByID[t.ID]
		if dupName || dupID || t.ID == (UUID{}) || t.Name == "" {
			r.fail("topic entry")
			break
		}
		img.Topics[t.Name] = t
		img.TopicsByID[t.ID] = t
	}

	img.BrokerConfigs = r.configSet()
	img.GroupConfigs = r.configSet()
	if version >= imageVersionV2 {
		r.security(img)
	}
	if version >= imageVersionV3 {
		img.ClientQuotas = r.configSet()
	}
	if version >= imageVersionV4 {
		img.ClientMetrics = r.configSet()
	}
	if err := r.done(); err != nil {
		return nil, fmt.Errorf("metadata snapshot: %w", err)
	}
	return img, nil
}
