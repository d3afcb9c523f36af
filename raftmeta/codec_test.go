package raftmeta

import (
	"bytes"
	"encoding/binary"
	"errors"
	"reflect"
	"testing"

	"sharq/log/crc32c"
)

// sampleCommands holds one well-formed command of every type.
func sampleCommands() []command {
	return []command{
		&bootstrapCmd{ClusterID: "MkU3OEVBNTcwNTJENDM2Qk", Features: map[string]int16{"metadata.version": 33, "share.version": 1}},
		&registerBrokerCmd{Broker{NodeID: 3, Host: "broker-3.example", Port: 9092, Rack: "eu-1a"}},
		&createTopicCmd{Name: "orders", ID: UUID{0xde, 0xad, 15: 1}, Assignment: [][]int32{{1, 2}, {2, 1}}, Configs: map[string]string{"retention.ms": "1000"}},
		&deleteTopicCmd{Name: "orders", ID: UUID{1}},
		&createPartitionsCmd{Name: "orders", ID: UUID{1}, From: 2, Assignment: [][]int32{{1}, {2}}},
		&alterConfigsCmd{Resource: resourceGroup, Entity: "g1", Set: map[string]string{"a": "b"}, Delete: []string{"c"}},
		&setFeatureCmd{Name: "share.version", Level: 2},
		&allocateProducerIDsCmd{Count: 1000},
		&alterScramCmd{Upserts: []scramUpsert{{ScramKey{"alice", 1}, ScramCredential{Salt: []byte("s"), StoredKey: []byte("k1"), ServerKey: []byte("k2"), Iterations: 4096}}},
			Deletes: []ScramKey{{"bob", 2}}},
		&createACLsCmd{ACLs: []ACL{{ResourceType: 2, ResourceName: "orders", PatternType: 3, Principal: "User:alice", Host: "*", Operation: 3, Permission: 3}}},
		&deleteACLsCmd{ACLs: []ACL{{ResourceType: 3, ResourceName: "g", PatternType: 4, Principal: "User:*", Host: "*", Operation: 2, Permission: 2}}},
		&alterPartitionsCmd{Changes: []partitionChange{{Topic: "orders", ID: UUID{7}, Partition: 1, PartitionEpoch: 3, Leader: 2, Replicas: []int32{2, 1}, ISR: []int32{2, 1}}}},
	}
}

func TestCommandTableComplete(t *testing.T) {
	seen := map[cmdType]bool{}
	for _, c := range sampleCommands() {
		seen[c.kind()] = true
		if commandTable[c.kind()] == nil {
			t.Errorf("%T (type %d) is not registered", c, c.kind())
		}
		if c.kind()&ignorableFlag != 0 {
			t.Errorf("%T is marked ignorable but changes state every node must share", c)
		}
	}
	for i, d := range commandTable {
		if d != nil && !seen[cmdType(i)] {
			t.Errorf("registered type %d (%s) has no sample", i, d.name)
		}
	}
}

func TestCommandRoundTrip(t *testing.T) {
	for _, c := range sampleCommands() {
		data := encodeCommand(c)
		got, err := decodeCommand(data)
		if err != nil {
			t.Fatalf("%T: %v", c, err)
		}
		if !reflect.DeepEqual(got, c) {
			t.Fatalf("%T round trip: got %+v want %+v", c, got, c)
		}
		// Every proper prefix is rejected, never mis-decoded or panicking.
		for i := 0; i < len(data); i++ {
			if _, err := decodeCommand(data[:i]); err == nil {
				t.Fatalf("%T: prefix of %d/%d bytes decoded", c, i, len(data))
			}
		}
		if _, err := decodeCommand(append(data, 0)); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("%T with a trailing byte: %v", c, err)
		}
	}
	if _, err := decodeCommand([]byte{0x55, 1}); !errors.Is(err, errUnknownCommand) {
		t.Fatalf("unknown type: %v", err)
	}
	// A map with keys out of order is not canonical and is rejected.
	bad := []byte{byte(cmdAlterConfigs), 1, byte(resourceGroup), 1, 'g', 2, 1, 'b', 0, 1, 'a', 0, 0}
	if _, err := decodeCommand(bad); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("unsorted map: %v", err)
	}
}

// FuzzCommandCodec: decoding arbitrary bytes never panics; whatever decodes
// re-encodes to bytes that decode to the same command and encode the same.
func FuzzCommandCodec(f *testing.F) {
	for _, c := range sampleCommands() {
		f.Add(encodeCommand(c))
	}
	f.Add([]byte{})
	f.Add([]byte{byte(cmdCreateTopic), 1})
	f.Add([]byte{byte(cmdCreateTopic), 1, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Add([]byte{byte(cmdAlterConfigs), 1, 9, 0, 0, 0})
	f.Add([]byte{byte(ignorableFlag | 5), 1, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := decodeCommand(data)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, errUnknownCommand) {
				t.Fatalf("error without a class: %v", err)
			}
			return
		}
		enc := encodeCommand(c)
		c2, err := decodeCommand(enc)
		if err != nil {
			t.Fatalf("re-decode of %x: %v", enc, err)
		}
		if !reflect.DeepEqual(c, c2) {
			t.Fatalf("round trip changed the command: %+v vs %+v", c, c2)
		}
		if !bytes.Equal(enc, encodeCommand(c2)) {
			t.Fatal("encoding is not stable")
		}
		// Applying a decoded command never panics either.
		c.apply(newBuilder(emptyImage()))
	})
}

// FuzzImageDecode: snapshot bytes from disk never panic the decoder and a
// decoded image re-encodes identically.
func FuzzImageDecode(f *testing.F) {
	h := &fsmHarness{t: nil, f: newFSM(discardLogger())}
	f.Add(encodeImage(h.f.image()))
	for _, c := range sampleCommands() {
		h.apply(c)
	}
	h.apply(&createTopicCmd{Name: "t2", ID: UUID{9}, Assignment: [][]int32{{1}}})
	f.Add(encodeImage(h.f.image()))
	h.apply(&alterConfigsCmd{Resource: resourceClientQuota, Entity: "client-id=app", Set: map[string]string{"producer_byte_rate": "1024"}})
	f.Add(encodeImage(h.f.image())) // version 3: client quotas
	h.apply(&alterConfigsCmd{Resource: resourceClientMetrics, Entity: "sub", Set: map[string]string{"interval.ms": "1000"}})
	f.Add(encodeImage(h.f.image())) // version 4: client metrics
	f.Add([]byte("SQMI\x01"))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkImageBytes(t, data)
		// Also as a payload with a valid header and checksum, so the fuzzer
		// reaches the field decoders instead of the CRC check.
		for _, v := range []string{"\x01", "\x02", "\x03", "\x04"} { // 2 adds security, 3 client quotas, 4 client metrics
			framed := append([]byte(imageMagic+v), data...)
			framed = binary.BigEndian.AppendUint32(framed, crc32c.Checksum(data))
			checkImageBytes(t, framed)
		}
	})
}

func checkImageBytes(t *testing.T, data []byte) {
	img, err := decodeImage(data)
	if err != nil {
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("error without ErrCorrupt: %v", err)
		}
		return
	}
	{
		enc := encodeImage(img)
		img2, err := decodeImage(enc)
		if err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		if !bytes.Equal(enc, encodeImage(img2)) {
			t.Fatal("image encoding is not stable")
		}
	}
}
