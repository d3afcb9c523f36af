package interop

import (
	"strconv"
	"strings"
	"testing"
)

// scenarioFeaturesUpdate runs kafka-features.sh upgrade / downgrade /
// disable (with and without --dry-run) on features no other scenario
// depends on, and the refusals (a downgrade through upgrade, an unknown
// feature, a level beyond the supported range, metadata.version downgrade
// and disable). The answers are Kafka 4.4's word for word, and so is
// --release-version 4.4 now that sharq implements every level it asks for
// (share.version 2, streams.version 1).
func scenarioFeaturesUpdate(t *testing.T, tg Target) {
	steps := []struct {
		name string
		args []string
		exit int
		want string // in stdout+stderr; "" = recorded only (differs on purpose)
	}{
		{"upgrade-same-dry-run", []string{"upgrade", "--feature", "group.version=1", "--dry-run"}, 0,
			"group.version can be upgraded to 1."},
		{"downgrade-dry-run", []string{"downgrade", "--feature", "group.version=0", "--dry-run"}, 0,
			"group.version can be downgraded to 0."},
		{"disable-dry-run", []string{"disable", "--feature", "group.version", "--dry-run"}, 0,
			"group.version can be disabled."},
		{"unsafe-downgrade-dry-run", []string{"downgrade", "--feature", "group.version=0", "--unsafe", "--dry-run"}, 0,
			"group.version can be downgraded to 0."},
		{"upgrade-same", []string{"upgrade", "--feature", "group.version=1"}, 0,
			"group.version was upgraded to 1."},
		{"upgrade-unknown", []string{"upgrade", "--feature", "no.such.feature=1"}, 1,
			"Could not upgrade no.such.feature to 1. The update failed for all features since the following feature had an error: Invalid update version 1 for feature no.such.feature. Local controller " + itoa(tg.BrokerID) + " does not support this feature."},
		{"upgrade-beyond-max", []string{"upgrade", "--feature", "group.version=9"}, 1,
			"Invalid update version 9 for feature group.version. Local controller " + itoa(tg.BrokerID) + " only supports versions 0-1"},
		{"upgrade-lower-dry-run", []string{"upgrade", "--feature", "transaction.version=1", "--dry-run"}, 1,
			"Can't downgrade the version of this feature without setting the upgrade type to either safe or unsafe downgrade."},
		{"downgrade-metadata-version", []string{"downgrade", "--metadata", "4.0-IV3"}, 1,
			"Unsupported metadata.version downgrade from 33 to 25. Refusing to perform the requested downgrade because it might delete metadata information."},
		{"disable-metadata-version", []string{"disable", "--feature", "metadata.version"}, 1,
			"Invalid update version 0 for feature metadata.version. Local controller " + itoa(tg.BrokerID) + " only supports versions 7-33"},
		{"two-features-one-bad", []string{"upgrade", "--feature", "group.version=1", "--feature", "no.such.feature=1"}, 1,
			"Could not upgrade group.version to 1. The update failed for all features since the following feature had an error: Invalid update version 1 for feature no.such.feature."},
		{"upgrade-release-version-dry-run", []string{"upgrade", "--release-version", "4.4", "--dry-run"}, -1, ""},
		{"downgrade-share-2-dry-run", []string{"downgrade", "--feature", "share.version=2", "--dry-run"}, -1, ""},
	}
	for _, s := range steps {
		res, _ := tool(t, tg, "features-update/"+s.name, "", ClassFeatures, args(tg, s.args...)...)
		out := res.Stdout + res.Stderr
		if s.exit >= 0 && res.ExitCode != s.exit {
			t.Errorf("%s: exit %d, want %d\n%s", s.name, res.ExitCode, s.exit, lastLines(out, 5))
		}
		if s.want != "" && !strings.Contains(out, s.want) {
			t.Errorf("%s: output lacks %q:\n%s", s.name, s.want, lastLines(out, 5))
		}
	}
	res := mustTool(t, tg, "features-update/describe", "", ClassFeatures, args(tg, "describe")...)
	feats, err := parseFeatures(res.Stdout)
	if err != nil {
		t.Fatalf("%v\n%s", err, res.Stdout)
	}
	// Streams groups (KIP-1071) are on by default in Kafka 4.4, as in sharq.
	if got := feats["streams.version"]["FinalizedVersionLevel"]; got != "1" {
		t.Errorf("streams.version finalized at %q, want 1", got)
	}
}

func itoa(v int32) string { return strconv.Itoa(int(v)) }

func lastLines(s string, n int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return strings.Join(l, "\n") + "\n"
}
