package raftmeta

import (
	"context"
	"fmt"
	"slices"
)

// FeatureSpec is one feature sharq implements: the levels it supports
// (advertised in ApiVersions and accepted by UpdateFeatures) and the level
// a new cluster is bootstrapped with (0: not finalized).
type FeatureSpec struct {
	Name      string
	Min, Max  int16
	Bootstrap int16
}

// featureTable is the one list of features. A level goes in only once sharq
// implements it: raising Max lets kafka-features.sh upgrade to it, raising
// Bootstrap finalizes it on new clusters. Levels beyond Max that an older
// sharq finalized are lowered to Max on start (reconcileFeatures).
//
// The levels mirror Apache Kafka 4.4 (MetadataVersion.LATEST_PRODUCTION =
// 4.4-IV2, level 33).
var featureTable = []FeatureSpec{
	{"eligible.leader.replicas.version", 0, 1, 1},
	{"group.version", 0, 1, 1},
	{"kraft.version", 0, 1, 1},
	{"metadata.version", 7, 33, 33}, // 3.3-IV3 .. 4.4-IV2
	{"share.version", 0, 2, 2},      // 2: KIP-1191 dead-letter queues
	{"streams.version", 0, 1, 1},    // 1: KIP-1071 streams groups
	{"transaction.version", 0, 2, 2},
}

// Features returns the supported features sorted by name.
func Features() []FeatureSpec { return slices.Clone(featureTable) }

// LookupFeature returns the named feature's spec.
func LookupFeature(name string) (FeatureSpec, bool) {
	for _, f := range featureTable {
		if f.Name == name {
			return f, true
		}
	}
	return FeatureSpec{}, false
}

func bootstrapFeatures() map[string]int16 {
	out := map[string]int16{}
	for _, f := range featureTable {
		if f.Bootstrap > 0 {
			out[f.Name] = f.Bootstrap
		}
	}
	return out
}

// UpgradeType is UpdateFeatures' upgrade type.
type UpgradeType int8

const (
	Upgrade         UpgradeType = 1
	SafeDowngrade   UpgradeType = 2
	UnsafeDowngrade UpgradeType = 3
)

// FeatureUpdate is one requested change; Level 0 disables the feature.
type FeatureUpdate struct {
	Name  string
	Level int16
	Type  UpgradeType
}

// FeatureUpdateError is why an UpdateFeatures request failed, worded as
// Kafka's controller words it (INVALID_UPDATE_VERSION).
type FeatureUpdateError struct {
	Feature string
	Msg     string
}

func (e *FeatureUpdateError) Error() string { return e.Msg }

// ValidateFeatureUpdates checks updates against the supported levels and
// the finalized ones in img, as Kafka's controller does: the first failing
// update fails the whole request.
func ValidateFeatureUpdates(img *Image, nodeID int32, updates []FeatureUpdate) error {
	for _, u := range updates {
		invalid := func(why string) error {
			return &FeatureUpdateError{u.Name, fmt.Sprintf("Invalid update version %d for feature %s. %s", u.Level, u.Name, why)}
		}
		spec, ok := LookupFeature(u.Name)
		if !ok {
			return invalid(fmt.Sprintf("Local controller %d does not support this feature.", nodeID))
		}
		if u.Level < spec.Min || u.Level > spec.Max {
			return invalid(fmt.Sprintf("Local controller %d only supports versions %d-%d", nodeID, spec.Min, spec.Max))
		}
		if u.Type < Upgrade || u.Type > UnsafeDowngrade {
			return invalid(fmt.Sprintf("Unknown upgrade type %d.", u.Type))
		}
		cur := img.Features[u.Name]
		switch {
		case u.Level > cur && u.Type != Upgrade:
			return invalid("Can't downgrade to a newer version.")
		case u.Level < cur && u.Type == Upgrade:
			return invalid("Can't downgrade the version of this feature without setting the upgrade type to either safe or unsafe downgrade.")
		case u.Level < cur && u.Name == "metadata.version":
			return &FeatureUpdateError{u.Name, fmt.Sprintf("Unsupported metadata.version downgrade from %d to %d. Refusing to perform the requested downgrade because it might delete metadata information.", cur, u.Level)}
		}
	}
	return nil
}

// UpdateFeatures validates updates against the current image and, unless
// validateOnly, finalizes them in order.
func (s *Store) UpdateFeatures(ctx context.Context, updates []FeatureUpdate, validateOnly bool) error {
	if err := ValidateFeatureUpdates(s.Image(), s.cfg.NodeID, updates); err != nil || validateOnly {
		return err
	}
	for _, u := range updates {
		if err := s.SetFeature(ctx, u.Name, u.Level); err != nil {
			return fmt.Errorf("finalize %s=%d: %w", u.Name, u.Level, err)
		}
	}
	return nil
}

// reconcileFeatures lowers finalized levels this sharq does not implement
// (a newer sharq may have finalized a higher level) to the highest it does.
func (s *Store) reconcileFeatures(ctx context.Context) error {
	for name, lvl := range s.Image().Features {
		spec, ok := LookupFeature(name)
		if !ok || lvl <= spec.Max {
			continue
		}
		if err := s.SetFeature(ctx, name, spec.Max); err != nil {
			return fmt.Errorf("lower %s from %d to %d: %w", name, lvl, spec.Max, err)
		}
		s.logger.Warn("lowered a finalized feature this sharq does not implement", "feature", name, "from", lvl, "to", spec.Max)
	}
	return nil
}
