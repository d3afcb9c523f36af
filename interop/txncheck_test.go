package interop

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// java/TxnCheck.java: Kafka 4.4's transactional KafkaProducer (commit,
// abort, sendOffsetsToTransaction, a zombie fenced by a second producer
// with the same transactional.id) and read_committed / read_uncommitted
// KafkaConsumers. The output must be the same on sharq and on Kafka.

var txnCheckBuild compiled

func txnCheckClasspath(t *testing.T) []string {
	t.Helper()
	return kafkaProgramClasspath(t, &txnCheckBuild, "TxnCheck", "classes-txncheck", "kafka-clients-"+KafkaVersion+".jar")
}

// kafkaProgramClasspath compiles java/<class>.java once per test binary
// against compileJar of the Kafka 4.4 jar set ("*" for all of them) into
// workDir/outDir, and returns the classpath that runs it.
func kafkaProgramClasspath(t *testing.T, c *compiled, class, outDir, compileJar string) []string {
	t.Helper()
	j := needJava(t)
	c.once.Do(func() {
		lib := LibDir(CacheDir(), "kafka-"+KafkaVersion)
		if !JarsComplete(lib) {
			c.err = fmt.Errorf("%w: %s (run interop/fetch-jars.sh)", ErrNoJars, lib)
			return
		}
		src, err := filepath.Abs(filepath.Join("java", class+".java"))
		if err != nil {
			c.err = err
			return
		}
		out := filepath.Join(workDir, outDir)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		jvmSem <- struct{}{}
		c.err = j.Javac(ctx, []string{filepath.Join(lib, compileJar)}, out, src)
		<-jvmSem
		c.cp = []string{out, filepath.Join(lib, "*")}
	})
	if c.err != nil {
		t.Fatalf("compile %s: %v", class, c.err)
	}
	return c.cp
}

func scenarioTxnCheck(t *testing.T, tg Target) {
	cp := txnCheckClasspath(t)
	j := needJava(t)
	topic, group := "interop-txn-check", "interop-txn-check-group"
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	jvmSem <- struct{}{}
	res, err := j.RunClasspath(ctx, nil, cp, "TxnCheck", tg.Bootstrap, topic, group)
	<-jvmSem
	t.Logf("TxnCheck: exit %d in %v", res.ExitCode, res.Elapsed.Round(time.Millisecond))
	if err != nil {
		t.Fatalf("TxnCheck: %v\n--- stdout ---\n%s\n--- stderr ---\n%s", err, res.Stdout, res.Stderr)
	}
	want := strings.Join([]string{
		"zombie fenced",
		"committed c-0,c-1,c-2,c-3",
		"uncommitted 7",
		"group-offset 5",
		"end-offsets committed=12 uncommitted=12",
		"done",
	}, "\n") + "\n"
	if res.Stdout != want {
		t.Errorf("TxnCheck output:\n%s\nwant:\n%s\n--- stderr ---\n%s", res.Stdout, want, res.Stderr)
	}
	if r := recorder(t); r != nil {
		if err := r.Record(tg.Name, "txn-check/output", res.Stdout); err != nil {
			t.Error(err)
		}
	}
}

var txnGroupCheckBuild compiled

// scenarioTxnGroupCheck runs java/TxnGroupCheck.java (4.4 clients): a
// transactional producer commits offsets for a group naming only the group
// (TxnOffsetCommit without member id, generation -1) while a consumer of
// the given group.protocol is a live member. Kafka accepts that commit
// whatever the group's members; the offset of the committed transaction
// must be the group's, the aborted one's not.
func scenarioTxnGroupCheck(protocol string) func(t *testing.T, tg Target) {
	return func(t *testing.T, tg Target) {
		cp := kafkaProgramClasspath(t, &txnGroupCheckBuild, "TxnGroupCheck", "classes-txngroupcheck", "kafka-clients-"+KafkaVersion+".jar")
		j := needJava(t)
		topic, group := "interop-txn-group-"+protocol, "interop-txn-group-"+protocol+"-g"
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		jvmSem <- struct{}{}
		res, err := j.RunClasspath(ctx, nil, cp, "TxnGroupCheck", tg.Bootstrap, topic, group, protocol)
		<-jvmSem
		t.Logf("TxnGroupCheck %s: exit %d in %v", protocol, res.ExitCode, res.Elapsed.Round(time.Millisecond))
		if err != nil {
			t.Fatalf("TxnGroupCheck: %v\n--- stdout ---\n%s\n--- stderr ---\n%s", err, res.Stdout, res.Stderr)
		}
		want := strings.Join([]string{
			"members 1",
			"commit ok",
			"abort ok",
			"group-offset 7",
			"done",
		}, "\n") + "\n"
		if res.Stdout != want {
			t.Errorf("TxnGroupCheck %s output:\n%s\nwant:\n%s\n--- stderr ---\n%s", protocol, res.Stdout, want, res.Stderr)
		}
		if r := recorder(t); r != nil {
			if err := r.Record(tg.Name, "txn-group-"+protocol+"/output", res.Stdout); err != nil {
				t.Error(err)
			}
		}
	}
}
