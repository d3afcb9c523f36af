package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The schema registry with real clients: confluent-kafka-python's
// SchemaRegistryClient and serializers (schema_registry_client.py), Confluent's
// JavaScript client (schema_registry_client.cjs) and Kafka's console
// consumer reading _schemas, against the sharq binary with its registry on.

// startRegistry starts sharq with schema.registry.listeners on a free port
// and returns it with the registry's URL.
func startRegistry(t *testing.T) (*Process, string) {
	t.Helper()
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p, err := StartSharq(ctx, buildSharq(t), t.TempDir(), time.Minute, "--override", "schema.registry.listeners="+url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Stop(30 * time.Second) })
	return p, url
}

var (
	srPyOnce sync.Once
	srPy     string
	srPyErr  error
)

// needRegistryPython returns the venv's python with the schema registry
// extras, running setup-python.sh (it returns at once when the venv has
// its pinned version). Skips locally without python3, fails in CI.
func needRegistryPython(t testing.TB) string {
	t.Helper()
	srPyOnce.Do(func() {
		if _, err := exec.LookPath("python3"); err != nil {
			srPyErr = errNoPython
			return
		}
		srPy, srPyErr = runSetup("setup-python.sh")
	})
	if srPyErr != nil {
		msg := fmt.Sprintf("interop: confluent-kafka venv with the schema registry extras unavailable: %v (run interop/setup-python.sh)", srPyErr)
		if inCI() || !errors.Is(srPyErr, errNoPython) {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return srPy
}

var (
	srNodeOnce sync.Once
	srNode     string
	srNodeErr  error
	errNoNode  = errors.New("node or npm not found")
)

// needRegistryNode returns the directory setup-node-sr.sh installed
// @confluentinc/schemaregistry into. Skips locally without node, fails in
// CI.
func needRegistryNode(t testing.TB) string {
	t.Helper()
	srNodeOnce.Do(func() {
		for _, bin := range []string{"node", "npm"} {
			if _, err := exec.LookPath(bin); err != nil {
				srNodeErr = errNoNode
				return
			}
		}
		srNode, srNodeErr = runSetup("setup-node-sr.sh")
	})
	if srNodeErr != nil {
		msg := fmt.Sprintf("interop: @confluentinc/schemaregistry unavailable: %v (run interop/setup-node-sr.sh)", srNodeErr)
		if inCI() || !errors.Is(srNodeErr, errNoNode) {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return srNode
}

// runSetup runs a setup script and returns the path it prints. With
// SHARQ_INTEROP_FETCH=0 the script may only find what is installed.
func runSetup(script string) (string, error) {
	path, err := filepath.Abs(script)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", path)
	cmd.Env = append(os.Environ(), "SHARQ_INTEROP_CACHE="+CacheDir())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s: %w\n%s", script, err, stderr.String())
	}
	return strings.TrimSpace(string(out)), nil
}

// TestSchemaRegistryPython: SchemaRegistryClient's calls, and the Avro, JSON
// Schema and Protobuf serializers producing to and consuming from sharq.
func TestSchemaRegistryPython(t *testing.T) {
	t.Parallel()
	py := needRegistryPython(t)
	p, url := startRegistry(t)
	script, err := filepath.Abs("schema_registry_client.py")
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []string{"api", "avro", "json", "protobuf"} {
		t.Run(step, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, py, script, step, "--bootstrap", p.Bootstrap, "--registry", url)
			cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1", "PYTHONUNBUFFERED=1")
			dieWithParent(cmd)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("%s: %v\n--- stdout ---\n%s\n--- stderr ---\n%s\n--- sharq.log ---\n%s", step, err, stdout.String(), stderr.String(), p.LogTail(3000))
			}
			_, done, err := parseRdEvents(stdout.String())
			if err != nil {
				t.Fatal(err)
			}
			if step != "api" && done.num("count") != 3 {
				t.Fatalf("%s: %v", step, done)
			}
			t.Logf("%s: %v", step, done)
		})
	}
}

// TestSchemaRegistryNode: @confluentinc/schemaregistry registers, looks up,
// evolves, serializes and deserializes through sharq's registry.
func TestSchemaRegistryNode(t *testing.T) {
	t.Parallel()
	dir := needRegistryNode(t)
	p, url := startRegistry(t)
	script, err := filepath.Abs("schema_registry_client.cjs")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", script, url)
	cmd.Env = append(os.Environ(), "NODE_PATH="+filepath.Join(dir, "node_modules"))
	dieWithParent(cmd)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), `"event":"done"`) {
		t.Fatalf("node: %v\n%s\n--- sharq.log ---\n%s", err, out, p.LogTail(3000))
	}
	t.Logf("%s", bytes.TrimSpace(out))
}

// TestSchemasTopicConsoleConsumer: Kafka's console consumer reads
// _schemas, keys and values in Confluent's JSON.
func TestSchemasTopicConsoleConsumer(t *testing.T) {
	t.Parallel()
	needJava(t)
	p, url := startRegistry(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, _ := newRegisterRequest(ctx, url, "console-value", `"string"`)
	resp, err := httpClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("register: %d", resp.StatusCode)
	}
	tg := p.Target
	res := mustTool(t, tg, "", "", ClassConsoleConsumer, args(tg, "--topic", "_schemas", "--from-beginning",
		"--max-messages", "1", "--timeout-ms", "20000", "--property", "print.key=true", "--property", "key.separator= | ")...)
	want := `{"keytype":"SCHEMA","subject":"console-value","version":1,"magic":1} | {"subject":"console-value","version":1,"id":1,"schemaType":"AVRO","schema":"\"string\"","deleted":false}`
	if !strings.Contains(res.Stdout, want) {
		t.Fatalf("console consumer:\n%s\nwant a line\n%s", res.Stdout, want)
	}
}

var httpClient = &http.Client{Timeout: 30 * time.Second}

func newRegisterRequest(ctx context.Context, url, subject, schema string) (*http.Request, error) {
	body, _ := json.Marshal(map[string]string{"schema": schema})
	req, err := http.NewRequestWithContext(ctx, "POST", url+"/subjects/"+subject+"/versions", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/vnd.schemaregistry.v1+json")
	return req, nil
}
