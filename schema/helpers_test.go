package schema

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
)

// memLog is an in-memory _schemas topic: offsets, batches, compaction.
type memLog struct {
	mu      sync.Mutex
	recs    []Record
	end     int64
	wake    chan struct{}
	failErr error // Append fails with it when set
	maxRec  int   // a value longer than this is ErrRecordTooLarge (0: none)
	appends int
}

func newMemLog() *memLog { return &memLog{wake: make(chan struct{})} }

func (m *memLog) Append(ctx context.Context, recs []Record) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.failErr != nil {
		return 0, m.failErr
	}
	for _, r := range recs {
		if m.maxRec > 0 && len(r.Value) > m.maxRec {
			return 0, fmt.Errorf("append: %w", ErrRecordTooLarge)
		}
	}
	for _, r := range recs {
		r.Offset = m.end
		r.Timestamp = 1700000000000 + m.end
		m.end++
		m.recs = append(m.recs, r)
	}
	m.appends++
	close(m.wake)
	m.wake = make(chan struct{})
	return m.end - 1, nil
}

// Read returns at most 3 records at a time, so readers loop as they do
// over a real log's batches.
func (m *memLog) Read(ctx context.Context, from int64) ([]Record, int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	i := sort.Search(len(m.recs), func(i int) bool { return m.recs[i].Offset >= from })
	if i == len(m.recs) {
		return nil, max(from, m.end), nil
	}
	j := min(i+3, len(m.recs))
	out := slices.Clone(m.recs[i:j])
	next := m.end
	if j < len(m.recs) {
		next = m.recs[j].Offset
	}
	return out, next, nil
}

func (m *memLog) Wait(ctx context.Context, offset int64) error {
	for {
		m.mu.Lock()
		if m.end > offset {
			m.mu.Unlock()
			return nil
		}
		ch := m.wake
		m.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// produce appends a record as another writer would (a Confluent
// registry, kafka-console-producer).
func (m *memLog) produce(key, value string) {
	var v []byte
	if value != "" {
		v = []byte(value)
	}
	m.Append(context.Background(), []Record{{Key: []byte(key), Value: v}})
}

// compact keeps the last record of each key and drops tombstones, as the
// log cleaner does once delete.retention.ms has passed.
func (m *memLog) compact() {
	m.mu.Lock()
	defer m.mu.Unlock()
	last := map[string]int{}
	for i, r := range m.recs {
		last[string(r.Key)] = i
	}
	var kept []Record
	for i, r := range m.recs {
		if last[string(r.Key)] == i && r.Value != nil {
			kept = append(kept, r)
		}
	}
	m.recs = kept
}

func (m *memLog) records() []Record {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.recs)
}

// fakeFormat parses JSON only: {"fields":["a","b"],"required":["a"],
// "refs":["name"]}. Canonical is compact JSON as sent, Normalized sorts
// keys. A reader can read a writer's data when every field the reader
// requires is a field of the writer. refs names must be resolved
// references. It exists so the core is tested without the real formats.
type fakeFormat struct{ typ string }

type fakeSchema struct {
	typ       string
	canonical string
	fields    []string
	required  []string
	refs      []ResolvedReference
}

func (f fakeFormat) Type() string { return f.typ }

func (f fakeFormat) Parse(text string, refs []ResolvedReference) (Parsed, error) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(text)); err != nil {
		return nil, fmt.Errorf("invalid JSON: %v", err)
	}
	var doc struct {
		Fields   []string `json:"fields"`
		Required []string `json:"required"`
		Refs     []string `json:"refs"`
	}
	json.Unmarshal([]byte(text), &doc)
	for _, name := range doc.Refs {
		if !slices.ContainsFunc(refs, func(r ResolvedReference) bool { return r.Name == name }) {
			return nil, fmt.Errorf("unresolved reference %s", name)
		}
	}
	return &fakeSchema{typ: f.typ, canonical: buf.String(), fields: doc.Fields, required: doc.Required, refs: refs}, nil
}

func (s *fakeSchema) Canonical() string { return s.canonical }

func (s *fakeSchema) Normalized() Parsed {
	var v any
	json.Unmarshal([]byte(s.canonical), &v)
	b, _ := json.Marshal(v) // maps marshal with sorted keys
	c := *s
	c.canonical = string(b)
	return &c
}

func (s *fakeSchema) BackwardCompatible(previous Parsed) []string {
	prev := previous.(*fakeSchema)
	var msgs []string
	for _, f := range s.required {
		if !slices.Contains(prev.fields, f) {
			msgs = append(msgs, fmt.Sprintf("{errorType:'READER_FIELD_MISSING_DEFAULT_VALUE', description:'The field '%s' in the %%s schema has no default value and is missing in the %%s schema'}", f))
		}
	}
	return msgs
}

func (s *fakeSchema) Formatted(format string) (string, error) {
	switch format {
	case "":
		return s.canonical, nil
	case "upper":
		return strings.ToUpper(s.canonical), nil
	}
	return "", errors.New("Unsupported format " + format)
}

var fakeFormats = []Format{fakeFormat{"AVRO"}, fakeFormat{"JSON"}, fakeFormat{"PROTOBUF"}}

// newTestRegistry opens a registry over log (a fresh one when nil).
func newTestRegistry(t testing.TB, log *memLog, opts ...func(*Options)) (*Registry, *memLog) {
	t.Helper()
	if log == nil {
		log = newMemLog()
	}
	o := Options{Log: log, Formats: fakeFormats, ClusterID: "test-cluster"}
	for _, f := range opts {
		f(&o)
	}
	r, err := Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	return r, log
}

// api is a registry behind an httptest server.
type api struct {
	t   testing.TB
	reg *Registry
	log *memLog
	srv *httptest.Server
}

func newAPI(t testing.TB, opts ...func(*Options)) *api {
	t.Helper()
	reg, log := newTestRegistry(t, nil, opts...)
	return newAPIOver(t, reg, log, HandlerOptions{})
}

func newAPIOver(t testing.TB, reg *Registry, log *memLog, ho HandlerOptions) *api {
	srv := httptest.NewServer(NewHandler(reg, ho))
	t.Cleanup(srv.Close)
	return &api{t: t, reg: reg, log: log, srv: srv}
}

// reply is a response: status, content type and body.
type reply struct {
	status int
	ctype  string
	body   string
}

func (r reply) json(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(r.body), v); err != nil {
		t.Fatalf("body %q: %v", r.body, err)
	}
}

// errCode is the error_code of an error body (0 when there is none).
func (r reply) errCode() int {
	var e struct {
		Code int `json:"error_code"`
	}
	json.Unmarshal([]byte(r.body), &e)
	return e.Code
}

func (a *api) do(method, path, body string, headers ...string) reply {
	a.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, a.srv.URL+path, rd)
	if err != nil {
		a.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", mediaV1)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := a.srv.Client().Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return reply{resp.StatusCode, resp.Header.Get("Content-Type"), string(b)}
}

// register registers a schema and returns its id.
func (a *api) register(subject, schema string, extra ...string) int {
	a.t.Helper()
	body := map[string]any{"schema": schema}
	for i := 0; i+1 < len(extra); i += 2 {
		var v any
		if err := json.Unmarshal([]byte(extra[i+1]), &v); err != nil {
			v = extra[i+1]
		}
		body[extra[i]] = v
	}
	b, _ := json.Marshal(body)
	r := a.do("POST", "/subjects/"+subject+"/versions", string(b))
	if r.status != 200 {
		a.t.Fatalf("register %s: %d %s", subject, r.status, r.body)
	}
	var out struct {
		ID int `json:"id"`
	}
	r.json(a.t, &out)
	return out.ID
}

// expect checks a response's status and, when code is not 0, its
// error_code.
func expect(t testing.TB, r reply, status, code int) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, r.body)
	}
	if code != 0 && r.errCode() != code {
		t.Fatalf("error_code %d, want %d: %s", r.errCode(), code, r.body)
	}
	if r.status >= 400 {
		var e struct {
			Code    *int    `json:"error_code"`
			Message *string `json:"message"`
		}
		if err := json.Unmarshal([]byte(r.body), &e); err != nil || e.Code == nil || e.Message == nil {
			t.Fatalf("error without Confluent's body: %q", r.body)
		}
	}
}

// schemaWith is a fake-format schema text.
func schemaWith(fields, required []string) string {
	b, _ := json.Marshal(map[string]any{"fields": fields, "required": required})
	return string(b)
}
