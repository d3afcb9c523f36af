package interop

import (
	"strings"
	"testing"
)

// scenarioMetadataQuorum: kafka-metadata-quorum.sh describe --status and
// --replication. The node is the leader and the only voter, with a log end
// offset at the high watermark; no observers. Recorded for the golden
// diff; endpoints and directory ids differ on purpose (a single sharq node
// has no controller listener and no directory ids).
func scenarioMetadataQuorum(t *testing.T, tg Target) {
	id := itoa(tg.BrokerID)
	res := mustTool(t, tg, "metadata-quorum/status", "", ClassMetadataQuorum, args(tg, "describe", "--status")...)
	for _, want := range []string{"LeaderId:               " + id, "CurrentVoters:          [{\"id\": " + id, "CurrentObservers:       []", "MaxFollowerLag:         0"} {
		if !strings.Contains(res.Stdout, want) {
			t.Errorf("--status lacks %q:\n%s", want, res.Stdout)
		}
	}
	res = mustTool(t, tg, "metadata-quorum/replication", "", ClassMetadataQuorum, args(tg, "describe", "--replication")...)
	lines := strings.Split(strings.TrimSpace(res.Stdout), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "NodeId") {
		t.Fatalf("--replication:\n%s", res.Stdout)
	}
	f := strings.Fields(lines[1])
	if f[0] != id || f[len(f)-1] != "Leader" || f[3] != "0" {
		t.Errorf("--replication row %q, want node %s, lag 0, Leader", lines[1], id)
	}
}
