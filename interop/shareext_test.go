package interop

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// java/ShareExtCheck.java: sharq's share group extensions (key-ordered
// delivery and redelivery backoff, sharq-only group configs) with Kafka
// 4.4's KafkaShareConsumer, three consumers in threads on lz4 batches
// holding several keys. sharq only: Kafka refuses the sharq.* group
// configs.

var shareExtBuild compiled

var shareExtBackoff = regexp.MustCompile(`^backoff (\S+) gap=(\d+)$`)

func scenarioShareExt(t *testing.T, tg Target) {
	if tg.Name != "sharq" {
		t.Skip("sharq-only group configs")
	}
	cp := kafkaProgramClasspath(t, &shareExtBuild, "ShareExtCheck", "classes-shareext", "kafka-clients-"+KafkaVersion+".jar")
	j := needJava(t)
	topic, group := "interop-share-ext", "interop-share-ext"
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	jvmSem <- struct{}{}
	res, err := j.RunClasspath(ctx, nil, cp, "ShareExtCheck", tg.Bootstrap, topic, group)
	<-jvmSem
	t.Logf("ShareExtCheck: exit %d in %v", res.ExitCode, res.Elapsed.Round(time.Millisecond))
	if err != nil {
		t.Fatalf("ShareExtCheck: %v\n--- stdout ---\n%s\n--- stderr ---\n%s", err, res.Stdout, res.Stderr)
	}
	backoffs := 0
	done := false
	for _, l := range strings.Split(strings.TrimSuffix(res.Stdout, "\n"), "\n") {
		switch {
		case strings.HasPrefix(l, "violation "):
			t.Error(l)
		case shareExtBackoff.MatchString(l):
			m := shareExtBackoff.FindStringSubmatch(l)
			if gap, _ := strconv.Atoi(m[2]); gap < 300 {
				t.Errorf("%s redelivered %d ms after its release, backoff 300 ms", m[1], gap)
			}
			backoffs++
		case l == "done accepted=96":
			done = true
		default:
			t.Errorf("unexpected line %q", l)
		}
	}
	if !done || backoffs != 8 {
		t.Errorf("done %v, %d backoff lines (want 8)\n%s", done, backoffs, res.Stdout)
	}
}
