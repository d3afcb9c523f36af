package interop

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// MirrorVersion is the MirrorMaker 2 release the suite runs: connect-mirror
// is published up to 4.3.1 (there is no 4.4.0 artifact), so MirrorMaker runs
// on its own 4.3.1 class path (pom.xml profile mirror-4.3.1), never mixed
// with the 4.4 jars.
const MirrorVersion = "4.3.1"

// ClassMirrorMaker is connect-mirror-maker.sh's main class (dedicated mode).
const ClassMirrorMaker = "org.apache.kafka.connect.mirror.MirrorMaker"

// MirrorLib is the lib/ directory of the MirrorMaker 2 jar set in cache.
func MirrorLib(cache string) string { return LibDir(cache, "mirror-"+MirrorVersion) }

// mm2Log4j2 logs INFO, as connect-log4j2 does, minus the configuration dumps
// every client prints at start-up (thousands of lines per MirrorMaker).
const mm2Log4j2 = `status = warn
appender.stdout.type = Console
appender.stdout.name = STDOUT
appender.stdout.layout.type = PatternLayout
appender.stdout.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.stdout.ref = STDOUT
logger.config.name = org.apache.kafka.common.config.AbstractConfig
logger.config.level = WARN
logger.appinfo.name = org.apache.kafka.common.utils.AppInfoParser
logger.appinfo.level = WARN
logger.reflections.name = org.reflections
logger.reflections.level = ERROR
`

// MirrorMakerJVMFlags are connect-mirror-maker.sh's heap (-Xmx2G there)
// scaled to a test machine, with kafka-run-class.sh's G1 tuning.
var MirrorMakerJVMFlags = []string{
	"-Xmx768M", "-Xms256M", "-server", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20",
	"-XX:InitiatingHeapOccupancyPercent=35", "-XX:+ExplicitGCInvokesConcurrent",
	"-Djava.awt.headless=true",
}

// StartMirrorMaker writes props to dir/mm2.properties and starts MirrorMaker
// 2 in dedicated mode from j's jars (j.Lib must be MirrorLib), its output in
// dir/mm2.log. It returns at once; the caller waits for what it mirrors.
// Stop the returned process with Stop.
func StartMirrorMaker(j *Java, dir, props string, jvmFlags []string) (*Process, error) {
	if jvmFlags == nil {
		jvmFlags = MirrorMakerJVMFlags
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", dir, err)
	}
	propsPath := filepath.Join(dir, "mm2.properties")
	if err := os.WriteFile(propsPath, []byte(props), 0o644); err != nil {
		return nil, fmt.Errorf("write %s: %w", propsPath, err)
	}
	logConf := filepath.Join(dir, "log4j2-mm2.properties")
	if err := os.WriteFile(logConf, []byte(mm2Log4j2), 0o644); err != nil {
		return nil, fmt.Errorf("write %s: %w", logConf, err)
	}
	logPath := filepath.Join(dir, "mm2.log")
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", logPath, err)
	}
	defer logf.Close() // the child has its own descriptor
	args := append([]string(nil), jvmFlags...)
	args = append(args, "-Xlog:disable", "-Xlog:all=warning:stderr",
		"-Dlog4j2.configurationFile="+logConf,
		"-cp", filepath.Join(j.Lib, "*"), ClassMirrorMaker, propsPath)
	cmd := exec.Command(j.Bin, args...)
	cmd.Dir = dir
	cmd.Stdout = logf
	cmd.Stderr = logf
	p, err := startProcess(cmd, "mirrormaker", logPath)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// LogLines returns the lines of p's log matching re, for asserting what
// MirrorMaker reported.
func (p *Process) LogLines(re *regexp.Regexp) []string {
	b, err := os.ReadFile(p.Log)
	if err != nil {
		return nil
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if re.MatchString(l) {
			out = append(out, l)
		}
	}
	return out
}

// WaitLog polls p's log until a line matches re, p exits or limit passes.
func (p *Process) WaitLog(ctx context.Context, re *regexp.Regexp, limit time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		if l := p.LogLines(re); len(l) > 0 {
			return l[0], nil
		}
		select {
		case <-p.done:
			return "", fmt.Errorf("%s exited (%v) before logging %q", p.Name, p.err, re)
		case <-ctx.Done():
			return "", fmt.Errorf("%s logged no %q within %v", p.Name, re, limit)
		case <-tick.C:
		}
	}
}
