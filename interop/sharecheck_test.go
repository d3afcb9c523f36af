package interop

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// java/ShareCheck.java: KafkaShareConsumer in explicit acknowledgement mode,
// compiled by the test against the 4.4 clients and against kafka-clients
// 4.1 (the oldest with share groups).

type compiled struct {
	once sync.Once
	cp   []string // class path to run with: classes dir, then the jars
	err  error
}

var javaBuilds sync.Map // jar set and source -> *compiled

// shareCheckClasspath compiles ShareCheck.java against set's kafka-clients
// jar (once per test binary) and returns the class path to run it with.
func shareCheckClasspath(t *testing.T, set, clientsJar string) []string {
	return javaClasspath(t, set, clientsJar, "ShareCheck.java")
}

// javaClasspath compiles java/src against set's kafka-clients jar (once
// per test binary) and returns the class path to run it with.
func javaClasspath(t *testing.T, set, clientsJar, src string) []string {
	t.Helper()
	j := needJava(t)
	v, _ := javaBuilds.LoadOrStore(set+"/"+src, &compiled{})
	c := v.(*compiled)
	c.once.Do(func() {
		lib := LibDir(CacheDir(), set)
		if !JarsComplete(lib) {
			c.err = fmt.Errorf("%w: %s (run interop/fetch-jars.sh)", ErrNoJars, lib)
			return
		}
		path, err := filepath.Abs(filepath.Join("java", src))
		if err != nil {
			c.err = err
			return
		}
		out := filepath.Join(workDir, "classes-"+set+"-"+strings.TrimSuffix(src, ".java"))
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		jvmSem <- struct{}{}
		start := time.Now()
		c.err = j.Javac(ctx, []string{filepath.Join(lib, clientsJar)}, out, path)
		<-jvmSem
		t.Logf("javac %s against %s: %v in %v", src, set, c.err, time.Since(start).Round(time.Millisecond))
		c.cp = []string{out, filepath.Join(lib, "*")}
	})
	if c.err != nil {
		t.Fatalf("compile %s against %s: %v", src, set, c.err)
	}
	return c.cp
}

var (
	shareDeliverLine = regexp.MustCompile(`^deliver (\S+) offset=(\d+) delivery=(\d+) ack=([A-Z]+)$`)
	shareSummaryLine = regexp.MustCompile(`^summary (\S+) deliveries=(\S+) acks=(\S+)$`)
)

// scenarioShareCheck runs ShareCheck with the clients of set and checks
// what the broker delivered: accepted and rejected records come once,
// a record released every time comes exactly group.share.delivery.count.limit
// (5) times with delivery counts 1..5 and then never again, a renewed record
// (4.2+ clients) comes back to the same consumer without a new delivery
// count. With dlq (KIP-1191) the group dead-letters into dlq.TOPIC and the
// dead-letter records (headers included) must be exactly what Kafka 4.4
// writes: the two rejected records and the one released to the limit.
func scenarioShareCheck(set, clientsJar, version string, renew, dlq bool) func(t *testing.T, tg Target) {
	return func(t *testing.T, tg Target) {
		cp := shareCheckClasspath(t, set, clientsJar)
		j := needJava(t)
		step := "share-check-" + version
		args := []string{}
		if dlq {
			step = "share-dlq"
			args = append(args, "dlq")
		}
		topic, group := "interop-"+step, "interop-"+step
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		jvmSem <- struct{}{}
		res, err := j.RunClasspath(ctx, nil, cp, "ShareCheck", append([]string{tg.Bootstrap, topic, group}, args...)...)
		<-jvmSem
		t.Logf("ShareCheck (clients %s): exit %d in %v", version, res.ExitCode, res.Elapsed.Round(time.Millisecond))
		if err != nil {
			t.Fatalf("ShareCheck: %v\n--- stdout ---\n%s\n--- stderr ---\n%s", err, res.Stdout, res.Stderr)
		}
		lines := strings.Split(strings.TrimSuffix(res.Stdout, "\n"), "\n")
		if want := fmt.Sprintf("client %s renew=%v", version, renew); lines[0] != want {
			t.Errorf("first line %q, want %q", lines[0], want)
		}
		var golden, dlqLines []string
		summaries := map[string][2]string{}
		last := map[string]int{} // key -> last delivery count seen
		has := map[string]bool{}
		for _, l := range lines {
			switch {
			case strings.HasPrefix(l, "client "), strings.HasPrefix(l, "produced "), strings.HasPrefix(l, "start-offset "):
				golden = append(golden, l)
				has[strings.Fields(l)[0]] = true
			case l == "quiet", l == "done", l == "deadline":
				has[l] = true
			case strings.HasPrefix(l, "commit "):
				if !strings.HasSuffix(l, " errors=0") {
					t.Errorf("commitSync reported errors: %q", l)
				}
				has["commit"] = true
			case strings.HasPrefix(l, "commit-error "):
				t.Errorf("%s", l)
			case shareDeliverLine.MatchString(l):
				m := shareDeliverLine.FindStringSubmatch(l)
				d, _ := strconv.Atoi(m[3])
				// Counts never go down and grow by at most one per delivery.
				if d < last[m[1]] || d > last[m[1]]+1 {
					t.Errorf("%s: delivery count %d after %d", m[1], d, last[m[1]])
				}
				last[m[1]] = d
			case dlq && strings.HasPrefix(l, "dlq "):
				dlqLines = append(dlqLines, l)
			case shareSummaryLine.MatchString(l):
				m := shareSummaryLine.FindStringSubmatch(l)
				summaries[m[1]] = [2]string{m[2], m[3]}
				golden = append(golden, l)
			default:
				t.Errorf("unexpected line %q", l)
			}
		}
		for _, k := range []string{"produced", "commit", "quiet", "start-offset", "done"} {
			if !has[k] {
				t.Errorf("no %q line (deadline reached: %v)\n%s", k, has["deadline"], res.Stdout)
			}
		}
		renewWant := [2]string{"1", "ACCEPT"}
		if renew {
			renewWant = [2]string{"1,1", "RENEW,ACCEPT"}
		}
		want := map[string][2]string{
			"accept-0":  {"1", "ACCEPT"},
			"accept-1":  {"1", "ACCEPT"},
			"accept-2":  {"1", "ACCEPT"},
			"reject-0":  {"1", "REJECT"},
			"reject-1":  {"1", "REJECT"},
			"release-0": {"1,2,3,4,5", "RELEASE,RELEASE,RELEASE,RELEASE,RELEASE"},
			"renew-0":   renewWant,
		}
		for k, w := range want {
			if got, ok := summaries[k]; !ok || got != w {
				t.Errorf("%s: deliveries=%s acks=%s, want deliveries=%s acks=%s", k, got[0], got[1], w[0], w[1])
			}
		}
		if len(summaries) != len(want) {
			t.Errorf("%d keys delivered, want %d: %v", len(summaries), len(want), summaries)
		}
		// The start offset the share coordinator holds: at least past the
		// two records acknowledged before the released one (Kafka 4.4
		// persists 2 here: the start offset moves past the archived record
		// in memory, and is written with the next state change).
		for _, l := range golden {
			if v, ok := strings.CutPrefix(l, "start-offset "); ok {
				if n, err := strconv.Atoi(v); err != nil || n < 2 || n > 7 {
					t.Errorf("share-partition start offset %q, want 2..7", v)
				}
			}
		}
		if dlq {
			rec := func(off int, key string, count int, msg string) string {
				return fmt.Sprintf("dlq partition=0 key=%s value=value-of-%s timestamp=create-time-of-write headers="+
					"__dlq.errors.topic=%s;__dlq.errors.partition=0;__dlq.errors.offset=%d;__dlq.errors.group=%s;"+
					"__dlq.errors.delivery.count=%d;__dlq.errors.message=%s", key, key, topic, off, group, count, msg)
			}
			want := strings.Join([]string{
				rec(1, "reject-0", 1, "Offset rejected by client."),
				rec(2, "release-0", 5, "Offset delivery count exceeded the threshold."),
				rec(5, "reject-1", 1, "Offset rejected by client."),
			}, "\n")
			if got := strings.Join(dlqLines, "\n"); got != want {
				t.Errorf("dead-letter records\n got:\n%s\nwant:\n%s", got, want)
			}
		}
		if r := recorder(t); r != nil {
			if err := r.Record(tg.Name, step+"/summary", strings.Join(golden, "\n")+"\n"); err != nil {
				t.Error(err)
			}
			if dlq {
				if err := r.Record(tg.Name, step+"/records", strings.Join(dlqLines, "\n")+"\n"); err != nil {
					t.Error(err)
				}
			}
		}
	}
}

// scenarioShareDLQConsole: kafka-console-share-consumer.sh with --reject
// fills the group's dead-letter topic, which kafka-console-consumer.sh
// --property print.headers=true then prints (print.headers=true): Kafka 4.4's headers and texts,
// key and value null (copy off), one record per rejected offset in order.
func scenarioShareDLQConsole(t *testing.T, tg Target) {
	const topic, group, dlq = "interop-dlq-console", "interop-dlq-console", "dlq.interop-dlq-console"
	mustTool(t, tg, "share-dlq-console/create", "", ClassTopics,
		args(tg, "--create", "--topic", topic, "--partitions", "1", "--replication-factor", "1")...)
	mustTool(t, tg, "share-dlq-console/create-dlq", "", ClassTopics,
		args(tg, "--create", "--topic", dlq, "--partitions", "1", "--replication-factor", "1",
			"--config", "errors.deadletterqueue.group.enable=true")...)
	mustTool(t, tg, "share-dlq-console/config", "", ClassConfigs,
		args(tg, "--alter", "--entity-type", "groups", "--entity-name", group,
			"--add-config", "share.auto.offset.reset=earliest,errors.deadletterqueue.topic.name="+dlq)...)
	mustTool(t, tg, "share-dlq-console/produce", "a\nb\nc\n", ClassConsoleProducer, args(tg, "--topic", topic)...)
	mustTool(t, tg, "share-dlq-console/reject", "", ClassConsoleShareConsume,
		args(tg, "--topic", topic, "--group", group, "--reject", "--max-messages", "3", "--timeout-ms", "60000")...)
	res := mustTool(t, tg, "share-dlq-console/read-dlq", "", ClassConsoleConsumer,
		args(tg, "--topic", dlq, "--from-beginning", "--max-messages", "3", "--timeout-ms", "60000",
			"--formatter-property", "print.headers=true", "--formatter-property", "print.key=true", "--formatter-property", "print.partition=true")...)
	var want []string
	for off := range 3 {
		want = append(want, fmt.Sprintf("Partition:0\t__dlq.errors.topic:%s,__dlq.errors.partition:0,__dlq.errors.offset:%d,"+
			"__dlq.errors.group:%s,__dlq.errors.delivery.count:1,__dlq.errors.message:Offset rejected by client.\tnull\tnull",
			topic, off, group))
	}
	if got := strings.TrimSuffix(res.Stdout, "\n"); got != strings.Join(want, "\n") {
		t.Errorf("dead-letter topic printed\n%s\nwant\n%s", got, strings.Join(want, "\n"))
	}
}
