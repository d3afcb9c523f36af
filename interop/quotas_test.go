package interop

import (
	"strings"
	"testing"
)

// scenarioClientQuotas: kafka-configs.sh --entity-type clients|users
// --alter / --describe, which go through AlterClientQuotas and
// DescribeClientQuotas; recorded for the golden diff. (--describe
// --entity-type users also asks DescribeUserScramCredentials, which comes
// with SASL/SCRAM.)
func scenarioClientQuotas(t *testing.T, tg Target) {
	steps := []struct {
		name string
		args []string
		want string
	}{
		{"alter-client", []string{"--alter", "--entity-type", "clients", "--entity-name", "interop-app", "--add-config", "producer_byte_rate=1048576,consumer_byte_rate=2097152"},
			"Completed updating config for client interop-app."},
		{"alter-user-default", []string{"--alter", "--entity-type", "users", "--entity-default", "--add-config", "request_percentage=200"},
			"Completed updating default config for users in the cluster."},
		{"describe-client", []string{"--describe", "--entity-type", "clients", "--entity-name", "interop-app"},
			"Quota configs for client-id 'interop-app' are consumer_byte_rate=2097152.0, producer_byte_rate=1048576.0"},
		{"delete-client", []string{"--alter", "--entity-type", "clients", "--entity-name", "interop-app", "--delete-config", "producer_byte_rate"},
			"Completed updating config for client interop-app."},
		{"describe-client-after", []string{"--describe", "--entity-type", "clients", "--entity-name", "interop-app"},
			"Quota configs for client-id 'interop-app' are consumer_byte_rate=2097152.0"},
	}
	for _, s := range steps {
		res := mustTool(t, tg, "client-quotas/"+s.name, "", ClassConfigs, args(tg, s.args...)...)
		if !strings.Contains(res.Stdout, s.want) {
			t.Errorf("%s: stdout lacks %q:\n%s", s.name, s.want, res.Stdout)
		}
	}
}
