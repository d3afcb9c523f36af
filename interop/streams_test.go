package interop

import (
	"context"
	"strings"
	"testing"
	"time"
)

// java/WordCountEOS.java: a Kafka Streams 4.4 word count with
// processing.guarantee=exactly_once_v2 (transactions, read_committed,
// TxnOffsetCommit with group metadata). Its output, read with
// read_committed, must be exact on sharq as on Kafka.

var wordCountBuild compiled

func wordCountClasspath(t *testing.T) []string {
	t.Helper()
	return kafkaProgramClasspath(t, &wordCountBuild, "WordCountEOS", "classes-wordcount", "*")
}

func scenarioStreamsEOS(t *testing.T, tg Target) {
	cp := wordCountClasspath(t)
	j := needJava(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	jvmSem <- struct{}{}
	res, err := j.RunClasspath(ctx, nil, cp, "WordCountEOS", tg.Bootstrap, "interop-wc", t.TempDir())
	<-jvmSem
	t.Logf("WordCountEOS: exit %d in %v", res.ExitCode, res.Elapsed.Round(time.Millisecond))
	if err != nil {
		t.Fatalf("WordCountEOS: %v\n--- stdout ---\n%s\n--- stderr ---\n%s", err, res.Stdout, res.Stderr)
	}
	want := strings.Join([]string{
		"counts alpha=60 beta=40 gamma=20",
		"max alpha=60 beta=40 gamma=20",
		"state RUNNING",
		"done",
	}, "\n") + "\n"
	if res.Stdout != want {
		tail := res.Stderr
		if len(tail) > 6000 {
			tail = tail[len(tail)-6000:]
		}
		t.Errorf("WordCountEOS output:\n%s\nwant:\n%s\n--- stderr (tail) ---\n%s", res.Stdout, want, tail)
	}
	if r := recorder(t); r != nil {
		if err := r.Record(tg.Name, "streams-eos/output", res.Stdout); err != nil {
			t.Error(err)
		}
	}
}
