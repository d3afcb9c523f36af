package broker

import (
	"strings"
	"testing"

	"sharq/group"
	"sharq/txn"
)

// TestStatePrefixesDisjoint: group offsets, staged transactional offsets,
// share state and transaction state share one pebble store; no prefix may
// be a prefix of another, or one package's scans and range deletions would
// reach into another's keys.
func TestStatePrefixesDisjoint(t *testing.T) {
	prefixes := map[string]string{
		"group offsets":      group.KeyPrefix,
		"staged txn offsets": group.TxnKeyPrefix,
		"share state":        "s/", // share's unexported keyPrefix (share/persister.go)
		"transaction state":  txn.KeyPrefix,
	}
	for a, pa := range prefixes {
		for b, pb := range prefixes {
			if a != b && strings.HasPrefix(pa, pb) {
				t.Errorf("%s prefix %q starts with %s prefix %q", a, pa, b, pb)
			}
		}
	}
}
