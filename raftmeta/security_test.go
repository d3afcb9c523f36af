package raftmeta

import (
	"bytes"
	"reflect"
	"testing"
)

func TestSecurityCommands(t *testing.T) {
	h := newFSMHarness(t)
	h.mustApply(&bootstrapCmd{ClusterID: "cid", Features: defaultFeatures})
	v1 := encodeImage(h.f.image())
	if v1[len(imageMagic)] != imageVersionV1 {
		t.Fatalf("an image without security state must stay version 1, got %d", v1[len(imageMagic)])
	}
	cred := ScramCredential{Salt: []byte("salt"), StoredKey: []byte("stored"), ServerKey: []byte("server"), Iterations: 4096}
	h.mustApply(&alterScramCmd{Upserts: []scramUpsert{{ScramKey{"alice", 1}, cred}, {ScramKey{"alice", 2}, cred}, {ScramKey{"bob", 1}, cred}}})
	h.mustApply(&alterScramCmd{Deletes: []ScramKey{{"alice", 2}, {"nobody", 1}}})
	a1 := ACL{ResourceType: 2, ResourceName: "t", PatternType: 3, Principal: "User:alice", Host: "*", Operation: 3, Permission: 3}
	a2 := a1
	a2.ResourceName = "s"
	a3 := a1
	a3.Permission = 2
	h.mustApply(&createACLsCmd{ACLs: []ACL{a1, a2, a3, a1}})
	h.mustApply(&deleteACLsCmd{ACLs: []ACL{a3}})

	img := h.f.image()
	if len(img.Scram) != 2 || !reflect.DeepEqual(img.Scram[ScramKey{"alice", 1}], cred) {
		t.Fatalf("scram %+v", img.Scram)
	}
	if want := []ACL{a2, a1}; !reflect.DeepEqual(img.ACLs, want) {
		t.Fatalf("acls %+v, want %+v", img.ACLs, want)
	}
	data := encodeImage(img)
	if data[len(imageMagic)] != imageVersionV2 {
		t.Fatalf("image with security state: version %d", data[len(imageMagic)])
	}
	got, err := decodeImage(data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Scram, img.Scram) || !reflect.DeepEqual(got.ACLs, img.ACLs) || !bytes.Equal(encodeImage(got), data) {
		t.Fatalf("round trip: %+v %+v", got.Scram, got.ACLs)
	}
	if _, err := decodeImage(v1); err != nil {
		t.Fatalf("version 1 image: %v", err)
	}
	// An invalid upsert changes nothing.
	if _, isErr := h.apply(&alterScramCmd{Upserts: []scramUpsert{{ScramKey{"", 1}, cred}}}).(error); !isErr {
		t.Fatal("empty user accepted")
	}
}

func TestSecurityRestart(t *testing.T) {
	dir := t.TempDir()
	ctx := testCtx(t)
	s := newStore(t, Config{Dir: dir, NodeID: 1})
	cred := ScramCredential{Salt: []byte("salt"), StoredKey: []byte("stored"), ServerKey: []byte("server"), Iterations: 8192}
	if err := s.AlterScram(ctx, map[ScramKey]ScramCredential{{"alice", 1}: cred}, nil); err != nil {
		t.Fatal(err)
	}
	acl := ACL{ResourceType: 2, ResourceName: "t", PatternType: 3, Principal: "User:alice", Host: "*", Operation: 3, Permission: 3}
	if err := s.CreateACLs(ctx, []ACL{acl}); err != nil {
		t.Fatal(err)
	}
	if err := s.raft.Snapshot().Error(); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteACLs(ctx, []ACL{acl}); err != nil {
		t.Fatal(err)
	}
	before := encodeImage(s.Image())
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = newStore(t, Config{Dir: dir, NodeID: 1})
	if !bytes.Equal(before, encodeImage(s.Image())) || len(s.Image().ACLs) != 0 || s.Image().Scram[ScramKey{"alice", 1}].Iterations != 8192 {
		t.Fatalf("security state changed across restart: %+v", s.Image())
	}
}
