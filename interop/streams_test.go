package interop

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
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

// java/WordCountStreamsGroup.java: a Kafka Streams 4.4 word count with
// group.protocol=streams (KIP-1071). The broker checks the topology,
// creates the repartition and changelog topics and assigns the tasks; the
// app is stopped and started again with an empty state directory, so the
// second run's counts are only right if its store came back from the
// changelog. While the first run is up, kafka-streams-groups.sh --list and
// --describe (--members, --offsets) run against the group.

var streamsGroupBuild compiled

const classStreamsGroups = "org.apache.kafka.tools.streams.StreamsGroupCommand"

func scenarioStreamsGroup(t *testing.T, tg Target) {
	runWordCountRestore(t, tg, "streams", "interop-sg")
}

// scenarioStreamsClassicRestore is the same word count and restart with
// the classic group protocol: the changelog restore without streams groups.
func scenarioStreamsClassicRestore(t *testing.T, tg Target) {
	runWordCountRestore(t, tg, "classic", "interop-sc")
}

func runWordCountRestore(t *testing.T, tg Target, protocol, app string) {
	cp := kafkaProgramClasspath(t, &streamsGroupBuild, "WordCountStreamsGroup", "classes-streams-group", "*")
	j := needJava(t)
	step := "streams-group"
	if protocol != "streams" {
		step = "streams-" + protocol + "-restore"
	}
	dir := t.TempDir()
	ready, goOn := filepath.Join(dir, "ready"), filepath.Join(dir, "go-on")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	release := holdAllJVMSlots(t)
	defer release()
	type outcome struct {
		res Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := j.RunClasspath(ctx, nil, cp, "WordCountStreamsGroup", tg.Bootstrap, app, filepath.Join(dir, "state"), ready, goOn, protocol)
		done <- outcome{res, err}
	}()
	// The tools run while the first instance holds its tasks.
	var o outcome
	toolsRan := false
wait:
	for {
		select {
		case o = <-done:
			break wait
		case <-time.After(100 * time.Millisecond):
			if toolsRan || !fileExists(ready) {
				continue
			}
			toolsRan = true
			if protocol == "streams" {
				streamsGroupTools(t, tg, app)
			}
			if err := os.WriteFile(goOn, nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Logf("WordCountStreamsGroup: exit %d in %v", o.res.ExitCode, o.res.Elapsed.Round(time.Millisecond))
	for _, l := range strings.Split(o.res.Stderr, "\n") {
		if strings.HasPrefix(l, "streams state ") {
			t.Log(l)
		}
	}
	if o.err != nil {
		t.Fatalf("WordCountStreamsGroup: %v\n--- stdout ---\n%s\n--- stderr ---\n%s", o.err, o.res.Stdout, tailString(o.res.Stderr, 8000))
	}
	want := strings.Join([]string{
		"counts1 alpha=60 beta=40 gamma=20",
		"state1 RUNNING",
		"counts2 alpha=90 beta=60 gamma=30",
		"restored yes",
		"state2 RUNNING",
		"done",
	}, "\n") + "\n"
	if o.res.Stdout != want {
		t.Errorf("WordCountStreamsGroup output:\n%s\nwant:\n%s\n--- stderr (tail) ---\n%s", o.res.Stdout, want, tailString(o.res.Stderr, 8000))
	}
	if !toolsRan {
		t.Error("the first run never got ready: kafka-streams-groups.sh did not run")
	}
	// The app has left: offsets admin on the empty group, then deletion.
	if protocol == "streams" {
		streamsGroupAdmin(t, tg, app)
	}
	if r := recorder(t); r != nil {
		if err := r.Record(tg.Name, step+"/output", o.res.Stdout); err != nil {
			t.Error(err)
		}
	}
}

// streamsGroupTools runs kafka-streams-groups.sh against the running app
// and records its output with the ids that differ per run masked.
func streamsGroupTools(t *testing.T, tg Target, app string) {
	t.Helper()
	for _, step := range []struct {
		name string
		args []string
	}{
		{"list", []string{"--list"}},
		{"describe", []string{"--describe", "--group", app}},
		{"describe-members", []string{"--describe", "--group", app, "--members"}},
		{"describe-members-verbose", []string{"--describe", "--group", app, "--members", "--verbose"}},
		{"describe-offsets", []string{"--describe", "--group", app, "--offsets"}},
		{"describe-state", []string{"--describe", "--group", app, "--state"}},
	} {
		res, err := runTool(t, tg, "", "", classStreamsGroups, false, args(tg, step.args...)...)
		if err != nil {
			t.Errorf("kafka-streams-groups %s: %v\n--- stdout ---\n%s\n--- stderr ---\n%s", step.name, err, res.Stdout, res.Stderr)
			continue
		}
		text := maskStreamsGroupOutput(res.Stdout, tg)
		t.Logf("kafka-streams-groups %s:\n%s", step.name, text)
		if r := recorder(t); r != nil {
			if err := r.Record(tg.Name, "streams-group/"+step.name, text); err != nil {
				t.Error(err)
			}
		}
		if step.name == "list" && !strings.Contains(res.Stdout, app) {
			t.Errorf("--list does not show %s:\n%s", app, res.Stdout)
		}
	}
	// kafka-groups.sh shows the group's type and protocol type.
	res, err := runTool(t, tg, "", "", ClassGroups, false, args(tg, "--list", "--group-type", "streams")...)
	if err != nil {
		t.Errorf("kafka-groups --list: %v\n%s%s", err, res.Stdout, res.Stderr)
		return
	}
	text := maskStreamsGroupOutput(res.Stdout, tg)
	t.Logf("kafka-groups --list --group-type streams:\n%s", text)
	if r := recorder(t); r != nil {
		if err := r.Record(tg.Name, "streams-group/groups-list", text); err != nil {
			t.Error(err)
		}
	}
}

// streamsGroupAdmin runs the offsets admin and delete commands of
// kafka-streams-groups.sh on the (now empty) group, as on Kafka.
func streamsGroupAdmin(t *testing.T, tg Target, app string) {
	t.Helper()
	in := app + "-in"
	for _, step := range []struct {
		name string
		args []string
	}{
		{"state-after", []string{"--describe", "--group", app, "--state"}},
		{"reset-dry-run", []string{"--reset-offsets", "--group", app, "--to-earliest", "--all-input-topics", "--dry-run"}},
		{"reset-execute", []string{"--reset-offsets", "--group", app, "--to-offset", "3", "--input-topic", in, "--execute"}},
		{"offsets-after-reset", []string{"--describe", "--group", app, "--offsets"}},
		{"delete-offsets", []string{"--delete-offsets", "--group", app, "--input-topic", in}},
		{"offsets-after-delete", []string{"--describe", "--group", app, "--offsets"}},
		{"delete", []string{"--delete", "--group", app}},
		{"list-after-delete", []string{"--list"}},
	} {
		res, _ := runTool(t, tg, "", "", classStreamsGroups, false, args(tg, step.args...)...)
		text := fmt.Sprintf("exit %d\n%s", res.ExitCode, maskStreamsGroupOutput(res.Stdout+res.Stderr, tg))
		t.Logf("kafka-streams-groups %s:\n%s", step.name, text)
		if r := recorder(t); r != nil {
			if err := r.Record(tg.Name, "streams-group/"+step.name, text); err != nil {
				t.Error(err)
			}
		}
		if res.ExitCode != 0 {
			t.Errorf("kafka-streams-groups %s: exit %d\n%s", step.name, res.ExitCode, lastLines(res.Stdout+res.Stderr, 10))
		}
	}
}

var (
	uuidRE    = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	spacesRE  = regexp.MustCompile(` +`)
	addressRE = regexp.MustCompile(`/127\.0\.0\.1`)
)

// maskStreamsGroupOutput replaces what differs between runs and targets
// (member ids: base64 Uuids; process ids: Uuids; the bootstrap address),
// folds column padding and sorts the rows under each header, which the
// tool prints in no fixed order.
func maskStreamsGroupOutput(out string, tg Target) string {
	out = uuidRE.ReplaceAllString(out, "<uuid>")
	out = strings.ReplaceAll(out, tg.Bootstrap, "<bootstrap>")
	out = addressRE.ReplaceAllString(out, "/<host>")
	out = spacesRE.ReplaceAllString(out, " ")
	var b strings.Builder
	var rows []string
	flush := func() {
		sort.Strings(rows)
		for _, r := range rows {
			b.WriteString(r + "\n")
		}
		rows = nil
	}
	for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		f := strings.Fields(line)
		for i, w := range f {
			if memberIDRE.MatchString(w) {
				f[i] = "<member>"
			}
		}
		line = strings.Join(f, " ")
		if len(f) == 0 || f[0] == "GROUP" {
			flush()
			b.WriteString(line + "\n")
			continue
		}
		rows = append(rows, line)
	}
	flush()
	return b.String()
}

// memberIDRE is a member id as the streams client makes it (a base64 Uuid).
var memberIDRE = regexp.MustCompile(`^[A-Za-z0-9_-]{22}$`)

func tailString(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
