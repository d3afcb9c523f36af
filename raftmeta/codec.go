package raftmeta

// Command codec: every raft log entry written by this package is
//
//	type(1) | version(1) | payload
//
// type: low 7 bits name the command (table below, registered from init()).
// The high bit (ignorableFlag) marks a command that an older node which does
// not know the type may skip without diverging (it only adds optional state).
// A node that meets an unknown type without that bit panics instead of
// applying the log differently from its peers.
//
// version: the payload format of that command, starting at 1. The payload is
// the compact binary encoding of wire.go (uvarints, zig-zag varints,
// length-prefixed strings, sorted maps); no reflection on the apply path.
//
// FORMAT MIGRATION: to change a payload, add version N+1 to the command's
// decoder while still decoding N (nodes run N and N+1 side by side during a
// rolling upgrade), keep the encoder writing N until every voter runs the new
// binary (gate it on a feature level such as metadata.version), and only then
// write N+1. Never reuse a type number; retire a type by leaving its decoder
// in place until no snapshot or log can contain it. A command that is safe to
// skip on old nodes gets a fresh number with ignorableFlag set.

import (
	"encoding/binary"
	"errors"
	"fmt"
)

type cmdType byte

const (
	cmdBootstrap           cmdType = 1
	cmdRegisterBroker      cmdType = 2
	cmdCreateTopic         cmdType = 3
	cmdDeleteTopic         cmdType = 4
	cmdCreatePartitions    cmdType = 5
	cmdAlterConfigs        cmdType = 6
	cmdSetFeature          cmdType = 7
	cmdAllocateProducerIDs cmdType = 8

	// ignorableFlag on a type means "skip me if you do not know me".
	ignorableFlag cmdType = 0x80
)

// errUnknownCommand is returned by decodeCommand for a type or payload
// version this binary does not know. The FSM turns it into a skip (ignorable
// types) or a panic (everything else); see fsm.applyEntry.
var errUnknownCommand = errors.New("unknown metadata command")

// command is one decoded metadata change.
type command interface {
	kind() cmdType
	version() byte
	// appendPayload appends the payload (after the type and version bytes).
	appendPayload(b []byte) []byte
	// apply mutates the image under construction and returns the value the
	// proposer receives through the raft future: a result or an error.
	apply(b *builder) any
}

type cmdDef struct {
	name string
	// decode decodes a payload of the given version; it returns an error
	// wrapping errUnknownCommand for versions it does not support.
	decode func(version byte, payload []byte) (command, error)
}

var commandTable [256]*cmdDef

// registerCommand is called from init() only: the table is immutable once
// the program runs, so it needs no lock.
func registerCommand(t cmdType, name string, decode func(byte, []byte) (command, error)) {
	if commandTable[t] != nil {
		panic(fmt.Sprintf("raftmeta: command type %d registered twice (%s, %s)", t, commandTable[t].name, name))
	}
	commandTable[t] = &cmdDef{name: name, decode: decode}
}

func commandName(t cmdType) string {
	if d := commandTable[t]; d != nil {
		return d.name
	}
	return fmt.Sprintf("unknown(%d)", byte(t))
}

// encodeCommand returns the log entry bytes for c.
func encodeCommand(c command) []byte {
	b := make([]byte, 0, 64)
	b = append(b, byte(c.kind()), c.version())
	return c.appendPayload(b)
}

// decodeCommand parses a log entry. Garbage gives an error wrapping ErrCorrupt;
// an unknown type or version gives an error wrapping errUnknownCommand.
func decodeCommand(entry []byte) (command, error) {
	if len(entry) < 2 {
		return nil, fmt.Errorf("metadata command of %d bytes: %w", len(entry), ErrCorrupt)
	}
	t, v := cmdType(entry[0]), entry[1]
	def := commandTable[t]
	if def == nil {
		return nil, fmt.Errorf("type %d: %w", byte(t), errUnknownCommand)
	}
	c, err := def.decode(v, entry[2:])
	if err != nil {
		return nil, fmt.Errorf("decode %s v%d: %w", def.name, v, err)
	}
	return c, nil
}

func unknownVersion(v byte) error {
	return fmt.Errorf("payload version %d: %w", v, errUnknownCommand)
}

func init() {
	registerCommand(cmdBootstrap, "bootstrap", decodeBootstrap)
	registerCommand(cmdRegisterBroker, "register-broker", decodeRegisterBroker)
	registerCommand(cmdCreateTopic, "create-topic", decodeCreateTopic)
	registerCommand(cmdDeleteTopic, "delete-topic", decodeDeleteTopic)
	registerCommand(cmdCreatePartitions, "create-partitions", decodeCreatePartitions)
	registerCommand(cmdAlterConfigs, "alter-configs", decodeAlterConfigs)
	registerCommand(cmdSetFeature, "set-feature", decodeSetFeature)
	registerCommand(cmdAllocateProducerIDs, "allocate-producer-ids", decodeAllocateProducerIDs)
}

// ---- bootstrap ----

// bootstrapCmd is the first command of a cluster: identity and the initial
// finalized feature levels.
type bootstrapCmd struct {
	ClusterID string
	Features  map[string]int16
}

func (*bootstrapCmd) kind() cmdType { return cmdBootstrap }
func (*bootstrapCmd) version() byte { return 1 }
func (c *bootstrapCmd) appendPayload(b []byte) []byte {
	b = appendString(b, c.ClusterID)
	return appendFeatures(b, c.Features)
}

func decodeBootstrap(v byte, p []byte) (command, error) {
	if v != 1 {
		return nil, unknownVersion(v)
	}
	r := reader{b: p}
	c := &bootstrapCmd{ClusterID: r.string(), Features: r.features()}
	return c, r.done()
}

func appendFeatures(b []byte, m map[string]int16) []byte {
	b = binary.AppendUvarint(b, uint64(len(m)))
	for _, k := range sortedKeys(m) {
		b = appendString(b, k)
		b = appendInt(b, int64(m[k]))
	}
	return b
}

func (r *reader) features() map[string]int16 {
	n := r.count(2)
	if n == 0 {
		return nil
	}
	m := make(map[string]int16, n)
	prev := ""
	for i := 0; i < n; i++ {
		k := r.string()
		lvl := r.int16()
		if r.err != nil {
			return nil
		}
		if i > 0 && k <= prev {
			r.fail("feature order")
			return nil
		}
		prev = k
		m[k] = lvl
	}
	return m
}

// ---- register broker ----

type registerBrokerCmd struct{ Broker Broker }

func (*registerBrokerCmd) kind() cmdType { return cmdRegisterBroker }
func (*registerBrokerCmd) version() byte { return 1 }
func (c *registerBrokerCmd) appendPayload(b []byte) []byte {
	b = appendInt(b, int64(c.Broker.NodeID))
	b = appendString(b, c.Broker.Host)
	b = appendInt(b, int64(c.Broker.Port))
	return appendString(b, c.Broker.Rack)
}

func decodeRegisterBroker(v byte, p []byte) (command, error) {
	if v != 1 {
		return nil, unknownVersion(v)
	}
	r := reader{b: p}
	c := &registerBrokerCmd{Broker{NodeID: r.int32(), Host: r.string(), Port: r.int32(), Rack: r.string()}}
	return c, r.done()
}

// ---- create topic ----

// createTopicCmd carries the full replica assignment chosen by the proposer
// and the topic id it generated, so applying it needs no randomness and
// smarter placement later needs no FSM change.
type createTopicCmd struct {
	Name       string
	ID         UUID
	Assignment [][]int32 // per partition, replicas; leader = first
	Configs    map[string]string
}

func (*createTopicCmd) kind() cmdType { return cmdCreateTopic }
func (*createTopicCmd) version() byte { return 1 }
func (c *createTopicCmd) appendPayload(b []byte) []byte {
	b = appendString(b, c.Name)
	b = append(b, c.ID[:]...)
	b = appendAssignment(b, c.Assignment)
	return appendStringMap(b, c.Configs)
}

func decodeCreateTopic(v byte, p []byte) (command, error) {
	if v != 1 {
		return nil, unknownVersion(v)
	}
	r := reader{b: p}
	c := &createTopicCmd{Name: r.string(), ID: r.uuid(), Assignment: r.assignment(), Configs: r.stringMap()}
	return c, r.done()
}

func appendAssignment(b []byte, a [][]int32) []byte {
	b = binary.AppendUvarint(b, uint64(len(a)))
	for _, replicas := range a {
		b = appendInt32s(b, replicas)
	}
	return b
}

func (r *reader) assignment() [][]int32 {
	n := r.count(1)
	if n == 0 {
		return nil
	}
	a := make([][]int32, n)
	for i := range a {
		a[i] = r.int32s()
	}
	return a
}

// ---- delete topic ----

// deleteTopicCmd names the topic by name and id: if the topic was deleted
// and recreated between proposal and apply, the new one must survive.
type deleteTopicCmd struct {
	Name string
	ID   UUID
}

func (*deleteTopicCmd) kind() cmdType { return cmdDeleteTopic }
func (*deleteTopicCmd) version() byte { return 1 }
func (c *deleteTopicCmd) appendPayload(b []byte) []byte {
	b = appendString(b, c.Name)
	return append(b, c.ID[:]...)
}

func decodeDeleteTopic(v byte, p []byte) (command, error) {
	if v != 1 {
		return nil, unknownVersion(v)
	}
	r := reader{b: p}
	c := &deleteTopicCmd{Name: r.string(), ID: r.uuid()}
	return c, r.done()
}

// ---- create partitions ----

// createPartitionsCmd adds partitions [From, From+len(Assignment)). From is
// the count the proposer saw; the FSM rejects the command if another change
// got there first (errStaleProposal), and the proposer retries.
type createPartitionsCmd struct {
	Name       string
	ID         UUID
	From       int32
	Assignment [][]int32
}

func (*createPartitionsCmd) kind() cmdType { return cmdCreatePartitions }
func (*createPartitionsCmd) version() byte { return 1 }
func (c *createPartitionsCmd) appendPayload(b []byte) []byte {
	b = appendString(b, c.Name)
	b = append(b, c.ID[:]...)
	b = appendInt(b, int64(c.From))
	return appendAssignment(b, c.Assignment)
}

func decodeCreatePartitions(v byte, p []byte) (command, error) {
	if v != 1 {
		return nil, unknownVersion(v)
	}
	r := reader{b: p}
	c := &createPartitionsCmd{Name: r.string(), ID: r.uuid(), From: r.int32(), Assignment: r.assignment()}
	return c, r.done()
}

// ---- alter configs ----

type configResource byte

const (
	resourceTopic  configResource = 1
	resourceBroker configResource = 2
	resourceGroup  configResource = 3
	// resourceClientQuota's entity is a QuotaEntityKey.
	resourceClientQuota configResource = 4
	// resourceClientMetrics's entity is a client metrics subscription name.
	resourceClientMetrics configResource = 5
)

// alterConfigsCmd sets then deletes dynamic config keys of one entity.
type alterConfigsCmd struct {
	Resource configResource
	Entity   string
	Set      map[string]string
	Delete   []string
}

func (*alterConfigsCmd) kind() cmdType { return cmdAlterConfigs }
func (*alterConfigsCmd) version() byte { return 1 }
func (c *alterConfigsCmd) appendPayload(b []byte) []byte {
	b = append(b, byte(c.Resource))
	b = appendString(b, c.Entity)
	b = appendStringMap(b, c.Set)
	return appendStrings(b, c.Delete)
}

func decodeAlterConfigs(v byte, p []byte) (command, error) {
	if v != 1 {
		return nil, unknownVersion(v)
	}
	r := reader{b: p}
	c := &alterConfigsCmd{Resource: configResource(r.byte()), Entity: r.string(), Set: r.stringMap(), Delete: r.strings()}
	if err := r.done(); err != nil {
		return nil, err
	}
	if c.Resource < resourceTopic || c.Resource > resourceClientMetrics {
		return nil, fmt.Errorf("config resource %d: %w", c.Resource, ErrCorrupt)
	}
	return c, nil
}

// ---- set feature ----

type setFeatureCmd struct {
	Name  string
	Level int16
}

func (*setFeatureCmd) kind() cmdType { return cmdSetFeature }
func (*setFeatureCmd) version() byte { return 1 }
func (c *setFeatureCmd) appendPayload(b []byte) []byte {
	b = appendString(b, c.Name)
	return appendInt(b, int64(c.Level))
}

func decodeSetFeature(v byte, p []byte) (command, error) {
	if v != 1 {
		return nil, unknownVersion(v)
	}
	r := reader{b: p}
	c := &setFeatureCmd{Name: r.string(), Level: r.int16()}
	return c, r.done()
}

// ---- allocate producer ids ----

type allocateProducerIDsCmd struct{ Count int64 }

func (*allocateProducerIDsCmd) kind() cmdType { return cmdAllocateProducerIDs }
func (*allocateProducerIDsCmd) version() byte { return 1 }
func (c *allocateProducerIDsCmd) appendPayload(b []byte) []byte {
	return appendInt(b, c.Count)
}

func decodeAllocateProducerIDs(v byte, p []byte) (command, error) {
	if v != 1 {
		return nil, unknownVersion(v)
	}
	r := reader{b: p}
	c := &allocateProducerIDsCmd{Count: r.varint()}
	return c, r.done()
}
