package raftmeta

// Security metadata: SCRAM credentials (AlterUserScramCredentials) and ACL
// bindings (CreateAcls / DeleteAcls). Both are replicated commands so every
// node authenticates and authorizes against the same state. The proposer
// resolves everything (filters to concrete bindings, passwords to keys); the
// FSM only applies.

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"slices"
)

// ScramKey names one SCRAM credential: a user and Kafka's mechanism type
// (1 SCRAM-SHA-256, 2 SCRAM-SHA-512).
type ScramKey struct {
	User      string
	Mechanism int8
}

// ScramCredential is a stored SCRAM credential (RFC 5802's server side).
type ScramCredential struct {
	Salt       []byte
	StoredKey  []byte
	ServerKey  []byte
	Iterations int32
}

// ACL is one access control binding, with Kafka's enum values
// (ResourceType, PatternType, AclOperation, AclPermissionType).
type ACL struct {
	ResourceType int8
	ResourceName string
	PatternType  int8
	Principal    string
	Host         string
	Operation    int8
	Permission   int8
}

func aclLess(a, b ACL) int {
	switch {
	case a.ResourceType != b.ResourceType:
		return int(a.ResourceType) - int(b.ResourceType)
	case a.ResourceName != b.ResourceName:
		if a.ResourceName < b.ResourceName {
			return -1
		}
		return 1
	case a.PatternType != b.PatternType:
		return int(a.PatternType) - int(b.PatternType)
	case a.Principal != b.Principal:
		if a.Principal < b.Principal {
			return -1
		}
		return 1
	case a.Host != b.Host:
		if a.Host < b.Host {
			return -1
		}
		return 1
	case a.Operation != b.Operation:
		return int(a.Operation) - int(b.Operation)
	}
	return int(a.Permission) - int(b.Permission)
}

const (
	cmdAlterScram cmdType = 18
	cmdCreateACLs cmdType = 19
	cmdDeleteACLs cmdType = 20
)

func init() {
	registerCommand(cmdAlterScram, "alter-scram", decodeAlterScram)
	registerCommand(cmdCreateACLs, "create-acls", decodeCreateACLs)
	registerCommand(cmdDeleteACLs, "delete-acls", decodeDeleteACLs)
}

// ---- alter scram ----

type scramUpsert struct {
	Key  ScramKey
	Cred ScramCredential
}

type alterScramCmd struct {
	Upserts []scramUpsert
	Deletes []ScramKey
}

func (*alterScramCmd) kind() cmdType { return cmdAlterScram }
func (*alterScramCmd) version() byte { return 1 }
func (c *alterScramCmd) appendPayload(b []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(c.Upserts)))
	for _, u := range c.Upserts {
		b = appendScram(b, u.Key, u.Cred)
	}
	b = binary.AppendUvarint(b, uint64(len(c.Deletes)))
	for _, k := range c.Deletes {
		b = appendString(b, k.User)
		b = append(b, byte(k.Mechanism))
	}
	return b
}

func appendScram(b []byte, k ScramKey, c ScramCredential) []byte {
	b = appendString(b, k.User)
	b = append(b, byte(k.Mechanism))
	b = appendBytes(b, c.Salt)
	b = appendBytes(b, c.StoredKey)
	b = appendBytes(b, c.ServerKey)
	return appendInt(b, int64(c.Iterations))
}

func (r *reader) scram() (ScramKey, ScramCredential) {
	k := ScramKey{User: r.string(), Mechanism: int8(r.byte())}
	c := ScramCredential{Salt: r.bytes(), StoredKey: r.bytes(), ServerKey: r.bytes(), Iterations: r.int32()}
	return k, c
}

func decodeAlterScram(v byte, p []byte) (command, error) {
	if v != 1 {
		return nil, unknownVersion(v)
	}
	r := reader{b: p}
	c := &alterScramCmd{}
	n := r.count(5)
	for i := 0; i < n && r.err == nil; i++ {
		k, cred := r.scram()
		c.Upserts = append(c.Upserts, scramUpsert{k, cred})
	}
	n = r.count(2)
	for i := 0; i < n && r.err == nil; i++ {
		c.Deletes = append(c.Deletes, ScramKey{User: r.string(), Mechanism: int8(r.byte())})
	}
	return c, r.done()
}

func (c *alterScramCmd) apply(b *builder) any {
	m := cloneMap(b.img.Scram)
	for _, k := range c.Deletes {
		delete(m, k)
	}
	for _, u := range c.Upserts {
		if u.Key.User == "" || u.Cred.Iterations <= 0 {
			return fmt.Errorf("scram credential for %q: %w", u.Key.User, ErrInvalidRequest)
		}
		m[u.Key] = u.Cred
	}
	b.img.Scram = m
	return nil
}

// ---- create / delete acls ----

type createACLsCmd struct{ ACLs []ACL }
type deleteACLsCmd struct{ ACLs []ACL }

func (*createACLsCmd) kind() cmdType                   { return cmdCreateACLs }
func (*createACLsCmd) version() byte                   { return 1 }
func (c *createACLsCmd) appendPayload(b []byte) []byte { return appendACLs(b, c.ACLs) }
func (*deleteACLsCmd) kind() cmdType                   { return cmdDeleteACLs }
func (*deleteACLsCmd) version() byte                   { return 1 }
func (c *deleteACLsCmd) appendPayload(b []byte) []byte { return appendACLs(b, c.ACLs) }

func appendACL(b []byte, a ACL) []byte {
	b = append(b, byte(a.ResourceType))
	b = appendString(b, a.ResourceName)
	b = append(b, byte(a.PatternType))
	b = appendString(b, a.Principal)
	b = appendString(b, a.Host)
	return append(b, byte(a.Operation), byte(a.Permission))
}

func appendACLs(b []byte, acls []ACL) []byte {
	b = binary.AppendUvarint(b, uint64(len(acls)))
	for _, a := range acls {
		b = appendACL(b, a)
	}
	return b
}

func (r *reader) acl() ACL {
	a := ACL{ResourceType: int8(r.byte()), ResourceName: r.string(), PatternType: int8(r.byte())}
	a.Principal, a.Host = r.string(), r.string()
	a.Operation, a.Permission = int8(r.byte()), int8(r.byte())
	return a
}

func (r *reader) acls() []ACL {
	n := r.count(7)
	var out []ACL
	for i := 0; i < n && r.err == nil; i++ {
		out = append(out, r.acl())
	}
	return out
}

func decodeCreateACLs(v byte, p []byte) (command, error) {
	if v != 1 {
		return nil, unknownVersion(v)
	}
	r := reader{b: p}
	c := &createACLsCmd{ACLs: r.acls()}
	return c, r.done()
}

func decodeDeleteACLs(v byte, p []byte) (command, error) {
	if v != 1 {
		return nil, unknownVersion(v)
	}
	r := reader{b: p}
	c := &deleteACLsCmd{ACLs: r.acls()}
	return c, r.done()
}

func (c *createACLsCmd) apply(b *builder) any {
	next := slices.Clone(b.img.ACLs)
	for _, a := range c.ACLs {
		if i, found := slices.BinarySearchFunc(next, a, aclLess); !found {
			next = slices.Insert(next, i, a)
		}
	}
	b.img.ACLs = next
	return nil
}

func (c *deleteACLsCmd) apply(b *builder) any {
	next := slices.Clone(b.img.ACLs)
	for _, a := range c.ACLs {
		if i, found := slices.BinarySearchFunc(next, a, aclLess); found {
			next = slices.Delete(next, i, i+1)
		}
	}
	b.img.ACLs = next
	return nil
}

// ---- snapshot sections (image version 2) ----

func appendSecurity(b []byte, img *Image) []byte {
	keys := make([]ScramKey, 0, len(img.Scram))
	for k := range img.Scram {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b ScramKey) int {
		if a.User != b.User {
			return bytes.Compare([]byte(a.User), []byte(b.User))
		}
		return int(a.Mechanism) - int(b.Mechanism)
	})
	b = binary.AppendUvarint(b, uint64(len(keys)))
	for _, k := range keys {
		b = appendScram(b, k, img.Scram[k])
	}
	return appendACLs(b, img.ACLs)
}

func (r *reader) security(img *Image) {
	n := r.count(5)
	for i := 0; i < n && r.err == nil; i++ {
		k, c := r.scram()
		if _, dup := img.Scram[k]; dup {
			r.fail("duplicate scram credential")
		}
		img.Scram[k] = c
	}
	img.ACLs = r.acls()
	if !slices.IsSortedFunc(img.ACLs, aclLess) {
		r.fail("acl order")
	}
}

// ---- Store methods ----

// AlterScram applies SCRAM credential upserts and deletions in one command.
func (s *Store) AlterScram(ctx context.Context, upserts map[ScramKey]ScramCredential, deletes []ScramKey) error {
	c := &alterScramCmd{Deletes: deletes}
	for k, v := range upserts {
		c.Upserts = append(c.Upserts, scramUpsert{k, v})
	}
	slices.SortFunc(c.Upserts, func(a, b scramUpsert) int {
		if a.Key.User != b.Key.User {
			return bytes.Compare([]byte(a.Key.User), []byte(b.Key.User))
		}
		return int(a.Key.Mechanism) - int(b.Key.Mechanism)
	})
	_, err := s.propose(ctx, c)
	return err
}

// CreateACLs adds bindings (existing ones are kept once).
func (s *Store) CreateACLs(ctx context.Context, acls []ACL) error {
	_, err := s.propose(ctx, &createACLsCmd{ACLs: acls})
	return err
}

// DeleteACLs removes exactly these bindings; absent ones are skipped.
func (s *Store) DeleteACLs(ctx context.Context, acls []ACL) error {
	_, err := s.propose(ctx, &deleteACLsCmd{ACLs: acls})
	return err
}
