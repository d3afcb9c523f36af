package raftmeta

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestValidateFeatureUpdates(t *testing.T) {
	img := &Image{Features: map[string]int16{"metadata.version": 33, "group.version": 1, "transaction.version": 2}}
	for _, tc := range []struct {
		name string
		u    FeatureUpdate
		want string // "" = valid
	}{
		{"same level", FeatureUpdate{"group.version", 1, Upgrade}, ""},
		{"safe downgrade", FeatureUpdate{"group.version", 0, SafeDowngrade}, ""},
		{"unsafe downgrade", FeatureUpdate{"transaction.version", 1, UnsafeDowngrade}, ""},
		{"unknown", FeatureUpdate{"no.such", 1, Upgrade}, "Invalid update version 1 for feature no.such. Local controller 1 does not support this feature."},
		{"beyond max", FeatureUpdate{"group.version", 9, Upgrade}, "Invalid update version 9 for feature group.version. Local controller 1 only supports versions 0-1"},
		{"streams beyond max", FeatureUpdate{"streams.version", 2, Upgrade}, "only supports versions 0-1"},
		{"downgrade by upgrade", FeatureUpdate{"transaction.version", 1, Upgrade}, "Can't downgrade the version of this feature without setting the upgrade type to either safe or unsafe downgrade."},
		{"upgrade by downgrade", FeatureUpdate{"share.version", 1, SafeDowngrade}, "Can't downgrade to a newer version."},
		{"metadata downgrade", FeatureUpdate{"metadata.version", 25, SafeDowngrade}, "Unsupported metadata.version downgrade from 33 to 25."},
		{"metadata disable", FeatureUpdate{"metadata.version", 0, SafeDowngrade}, "only supports versions 7-33"},
		{"bad type", FeatureUpdate{"group.version", 1, 7}, "Unknown upgrade type 7."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := ValidateFeatureUpdates(img, 1, []FeatureUpdate{tc.u})
			var fe *FeatureUpdateError
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("unexpected %v", err)
			case tc.want != "" && (!errors.As(err, &fe) || !strings.Contains(fe.Msg, tc.want)):
				t.Errorf("got %v, want %q", err, tc.want)
			}
		})
	}
}

// TestUpdateFeaturesAndReconcile: updates are finalized (not with
// validateOnly), and a level this sharq does not implement, as a newer
// sharq may finalize (streams.version=2 here), is lowered on the next start.
func TestUpdateFeaturesAndReconcile(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(Config{Dir: dir, NodeID: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if lvl := s.Image().Features["streams.version"]; lvl != 1 {
		t.Fatalf("streams.version %d on a new cluster, want 1", lvl)
	}
	down := []FeatureUpdate{{"group.version", 0, SafeDowngrade}}
	if err := s.UpdateFeatures(ctx, down, true); err != nil || s.Image().Features["group.version"] != 1 {
		t.Fatalf("validate only: %v, group.version %d", err, s.Image().Features["group.version"])
	}
	if err := s.UpdateFeatures(ctx, down, false); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Image().Features["group.version"]; ok {
		t.Fatal("group.version still finalized after disable")
	}
	if err := s.UpdateFeatures(ctx, []FeatureUpdate{{"group.version", 1, Upgrade}}, false); err != nil || s.Image().Features["group.version"] != 1 {
		t.Fatalf("upgrade: %v", err)
	}
	// What an older sharq wrote.
	if err := s.SetFeature(ctx, "streams.version", 2); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(Config{Dir: dir, NodeID: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if lvl := s.Image().Features["streams.version"]; lvl != 1 {
		t.Errorf("streams.version %d after restart, want it lowered to 1", lvl)
	}
	if s.Image().Features["group.version"] != 1 {
		t.Errorf("group.version %d after restart", s.Image().Features["group.version"])
	}
}
