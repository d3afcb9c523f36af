package broker

// Fault injection on the wire: the rule engine is broker/fault; this file
// describes a request to it and applies the effect of the rule that fires.
// The request path reaches it through one check in conn.dispatch, a single
// atomic load (fault.Set.On) while no rule is live, so the hot paths are
// unchanged then. Everything here runs only while rules are live, so it
// may allocate and walk kmsg's structs by reflection: kmsg names the
// parts of every API alike (Topics[].Topic/TopicID, Partitions[].Partition,
// ErrorCode), which lets one walker serve every API instead of a table per
// API. docs/faults.md is the user's reference.

import (
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/broker/fault"
	"sharq/raftmeta"
)

// faultState is the server's fault rules and what they did.
type faultState struct {
	*fault.Set
}

// nodeID is the node id the connection was accepted on, what a rule's
// node filter matches.
func (c *conn) nodeID() int32 { return c.node }

// errFaultClose and errFaultHang end a connection on a rule's behalf; the
// dispatch path closes it as for any handler error.
var (
	errFaultClose = errors.New("closed by a fault rule")
	errFaultHang  = errors.New("request left unanswered by a fault rule until the connection closed")
)

// handleFaulted serves a request while fault rules are live: as
// api.handle when no rule fires, else with the rule's effect.
func (c *conn) handleFaulted(r *request, api *apiEntry, req kmsg.Request) (kmsg.Response, error) {
	img := c.s.meta.Image()
	fr := fault.Request{Key: r.key, Version: r.version, Node: c.nodeID(), ClientID: r.clientID, Principal: c.auth.principal}
	describeRequest(req, img, &fr)
	rule, ok := c.s.faults.Match(&fr)
	if !ok {
		return c.answer(r, api, req)
	}
	attrs := []any{"rule", rule.ID, "effect", rule.Effect(), "api", kmsg.NameForKey(r.key), "version", r.version,
		"client_id", r.clientID, "correlation_id", r.correlationID}
	if rule.Error != nil {
		attrs = append(attrs, "error", fault.ErrorName(int16(*rule.Error)))
	}
	c.logger.Info("fault injected", attrs...)

	if rule.LatencyMs > 0 {
		t := time.NewTimer(time.Duration(rule.LatencyMs) * time.Millisecond)
		select {
		case <-t.C:
		case <-c.ctx.Done():
			t.Stop()
			return nil, c.ctx.Err()
		}
	}
	switch {
	case rule.NoAnswer:
		// The reader notices the client closing (handleInline leaves
		// requests to the processor while rules are live).
		<-c.ctx.Done()
		return nil, errFaultHang
	case rule.Close && !rule.After:
		return nil, errFaultClose
	}
	var resp kmsg.Response
	var err error
	if rule.Error != nil && !rule.After {
		resp, err = c.failBefore(r, api, req, &rule, fr.Entities, img)
	} else {
		if resp, err = c.answer(r, api, req); err != nil {
			return nil, err
		}
		if rule.Close {
			return nil, errFaultClose
		}
		if rule.Error != nil && resp != nil {
			code := int16(*rule.Error)
			if rule.EffectiveScope(hasTopError(resp)) == fault.ScopeRequest {
				setTopError(req, resp, code, false)
			} else {
				var failed []fault.Entity
				for _, e := range fr.Entities {
					if rule.MatchEntity(e) {
						failed = append(failed, e)
					}
				}
				addEntityErrors(resp, failed, code)
			}
		}
	}
	if err == nil && resp != nil && rule.ThrottleMs > 0 {
		if t, ok := resp.(kmsg.ThrottleResponse); ok {
			if cur, _ := t.Throttle(); cur < rule.ThrottleMs {
				t.(kmsg.SetThrottleResponse).SetThrottle(rule.ThrottleMs)
			}
		}
	}
	return resp, err
}

// failBefore answers rule's error without applying what it hits: the whole
// request (scope request), or the matching topic-partitions, the rest being
// served for real.
func (c *conn) failBefore(r *request, api *apiEntry, req kmsg.Request, rule *fault.Rule, entities []fault.Entity, img *raftmeta.Image) (kmsg.Response, error) {
	code := int16(*rule.Error)
	empty := func() kmsg.Response {
		resp := req.ResponseKind()
		resp.SetVersion(r.version)
		return resp
	}
	if p, ok := req.(*kmsg.ProduceRequest); ok && p.Acks == 0 {
		// Kafka answers no acks=0 Produce: it closes the connection on an
		// error, which is what the client can see.
		return nil, errFaultClose
	}
	if rule.EffectiveScope(hasTopError(req.ResponseKind())) == fault.ScopeRequest {
		resp := empty()
		setTopError(req, resp, code, true)
		return resp, nil
	}
	var failed []fault.Entity
	for _, e := range entities {
		if rule.MatchEntity(e) {
			failed = append(failed, e)
		}
	}
	if len(failed) == 0 {
		return c.answer(r, api, req)
	}
	var resp kmsg.Response
	if len(failed) == len(entities) {
		resp = empty()
	} else {
		restore := trimRequest(req, rule, img)
		var err error
		resp, err = c.answer(r, api, req)
		restore()
		if err != nil || resp == nil {
			return resp, err
		}
	}
	addEntityErrors(resp, failed, code)
	return resp, nil
}

// describeRequest fills what rules filter on from a decoded request.
func describeRequest(req kmsg.Request, img *raftmeta.Image, fr *fault.Request) {
	if fc, ok := req.(*kmsg.FindCoordinatorRequest); ok {
		keys := append([]string(nil), fc.CoordinatorKeys...)
		if fc.CoordinatorKey != "" {
			keys = append(keys, fc.CoordinatorKey)
		}
		switch fc.CoordinatorType {
		case 0:
			fr.Groups = keys
		case 1:
			fr.TxnIDs = keys
		}
		return
	}
	v := reflect.ValueOf(req).Elem()
	fr.Groups = namedStrings(v, fr.Groups, "Group", "GroupID", "Groups", "GroupIDs")
	fr.TxnIDs = namedStrings(v, fr.TxnIDs, "TransactionalID", "TransactionalIDs", "Transactions")
	topics := v.FieldByName("Topics")
	if topics.Kind() != reflect.Slice {
		return
	}
	for i := 0; i < topics.Len(); i++ {
		t := topics.Index(i)
		if t.Kind() != reflect.Struct {
			continue
		}
		name, id := topicOf(t, img)
		parts := t.FieldByName("Partitions")
		if parts.Kind() != reflect.Slice {
			fr.Entities = append(fr.Entities, fault.Entity{Topic: name, TopicID: id, Partition: -1})
			continue
		}
		for j := 0; j < parts.Len(); j++ {
			if p, ok := partitionOf(parts.Index(j)); ok {
				fr.Entities = append(fr.Entities, fault.Entity{Topic: name, TopicID: id, Partition: p})
			}
		}
	}
}

// namedStrings appends the values of v's string, *string and []string
// fields of those names, and of a slice of structs' fields of the same
// names (OffsetFetch v8's Groups[].Group, AddPartitionsToTxn v4's
// Transactions[].TransactionalID).
func namedStrings(v reflect.Value, dst []string, names ...string) []string {
	for _, n := range names {
		f := v.FieldByName(n)
		switch {
		case f.Kind() == reflect.String:
			if f.String() != "" {
				dst = append(dst, f.String())
			}
		case f.Kind() == reflect.Pointer && f.Type().Elem().Kind() == reflect.String:
			if !f.IsNil() {
				dst = append(dst, f.Elem().String())
			}
		case f.Kind() == reflect.Slice && f.Type().Elem().Kind() == reflect.String:
			for i := 0; i < f.Len(); i++ {
				dst = append(dst, f.Index(i).String())
			}
		case f.Kind() == reflect.Slice && f.Type().Elem().Kind() == reflect.Struct:
			for i := 0; i < f.Len(); i++ {
				dst = namedStrings(f.Index(i), dst, names...)
			}
		}
	}
	return dst
}

// topicOf reads a topic element's name and id, each completed from the
// other through the metadata image.
func topicOf(t reflect.Value, img *raftmeta.Image) (string, [16]byte) {
	name := stringField(t, "Topic")
	var id [16]byte
	if f := t.FieldByName("TopicID"); f.IsValid() && f.Type() == reflect.TypeOf(id) {
		id = f.Interface().([16]byte)
	}
	if img != nil {
		if name == "" && id != ([16]byte{}) {
			if tp := img.TopicsByID[raftmeta.UUID(id)]; tp != nil {
				name = tp.Name
			}
		} else if name != "" && id == ([16]byte{}) {
			if tp := img.Topics[name]; tp != nil {
				id = [16]byte(tp.ID)
			}
		}
	}
	return name, id
}

func stringField(v reflect.Value, name string) string {
	f := v.FieldByName(name)
	switch {
	case f.Kind() == reflect.String:
		return f.String()
	case f.Kind() == reflect.Pointer && f.Type().Elem().Kind() == reflect.String && !f.IsNil():
		return f.Elem().String()
	}
	return ""
}

func partitionOf(p reflect.Value) (int32, bool) {
	switch p.Kind() {
	case reflect.Int32:
		return int32(p.Int()), true
	case reflect.Struct:
		if f := p.FieldByName("Partition"); f.Kind() == reflect.Int32 {
			return int32(f.Int()), true
		}
	}
	return 0, false
}

// hasTopError reports whether an answer has a top-level error code.
func hasTopError(resp kmsg.Response) bool {
	f := reflect.ValueOf(resp).Elem().FieldByName("ErrorCode")
	return f.Kind() == reflect.Int16
}

// setTopError sets an answer's top-level error code, and where the API
// moved it into a list of groups or coordinator keys in later versions
// (OffsetFetch v8+, FindCoordinator v4+, DescribeGroups, ...) sets it on
// each entry: the ones the handler answered (after), or, for an answer
// not served (fresh), entries made for every key the request names.
func setTopError(req kmsg.Request, resp kmsg.Response, code int16, fresh bool) {
	rv := reflect.ValueOf(resp).Elem()
	if f := rv.FieldByName("ErrorCode"); f.Kind() == reflect.Int16 {
		f.SetInt(int64(code))
	}
	for _, list := range []string{"Groups", "Coordinators"} {
		l := rv.FieldByName(list)
		if l.Kind() != reflect.Slice || l.Type().Elem().Kind() != reflect.Struct {
			continue
		}
		if _, ok := l.Type().Elem().FieldByName("ErrorCode"); !ok {
			continue
		}
		if fresh {
			for _, key := range requestKeys(req) {
				e := newDefault(l.Type().Elem())
				for _, n := range []string{"Group", "GroupID", "Key"} {
					if f := e.FieldByName(n); f.Kind() == reflect.String {
						f.SetString(key)
					}
				}
				l.Set(reflect.Append(l, e))
			}
		}
		for i := 0; i < l.Len(); i++ {
			l.Index(i).FieldByName("ErrorCode").SetInt(int64(code))
		}
	}
}

// requestKeys lists the group ids or coordinator keys a request names.
func requestKeys(req kmsg.Request) []string {
	if fc, ok := req.(*kmsg.FindCoordinatorRequest); ok {
		return fc.CoordinatorKeys
	}
	v := reflect.ValueOf(req).Elem()
	var out []string
	for _, n := range []string{"Groups", "GroupIDs"} {
		f := v.FieldByName(n)
		switch {
		case f.Kind() == reflect.Slice && f.Type().Elem().Kind() == reflect.String:
			for i := 0; i < f.Len(); i++ {
				out = append(out, f.Index(i).String())
			}
		case f.Kind() == reflect.Slice && f.Type().Elem().Kind() == reflect.Struct:
			for i := 0; i < f.Len(); i++ {
				if g := stringField(f.Index(i), "Group"); g != "" {
					out = append(out, g)
				}
			}
		}
	}
	return out
}

// supportsEntities reports whether an API's request and answer both list
// topics (with partitions, or topics alone) in the shape the walker
// knows, so a rule can fail some of them.
func supportsEntities(key int16) bool {
	req := kmsg.RequestForKey(key)
	if req == nil {
		return false
	}
	rt := reflect.TypeOf(req).Elem()
	st := reflect.TypeOf(req.ResponseKind()).Elem()
	rf, ok1 := rt.FieldByName("Topics")
	sf, ok2 := st.FieldByName("Topics")
	if !ok1 || !ok2 || rf.Type.Kind() != reflect.Slice || sf.Type.Kind() != reflect.Slice ||
		rf.Type.Elem().Kind() != reflect.Struct || sf.Type.Elem().Kind() != reflect.Struct {
		return false
	}
	rp, rok := rf.Type.Elem().FieldByName("Partitions")
	sp, sok := sf.Type.Elem().FieldByName("Partitions")
	if !rok && !sok {
		_, errOK := sf.Type.Elem().FieldByName("ErrorCode")
		return errOK
	}
	if !rok || !sok || sp.Type.Kind() != reflect.Slice || sp.Type.Elem().Kind() != reflect.Struct || rp.Type.Kind() != reflect.Slice {
		return false
	}
	_, hasPart := sp.Type.Elem().FieldByName("Partition")
	_, hasErr := sp.Type.Elem().FieldByName("ErrorCode")
	return hasPart && hasErr
}

// trimRequest removes the topic-partitions rule hits from req (and makes
// a long poll answer at once, as Kafka does when a partition errs) and
// returns what puts req back as it was: its slices may be connection
// memory a decoder reuses, so they are replaced, never rewritten.
func trimRequest(req kmsg.Request, rule *fault.Rule, img *raftmeta.Image) (restore func()) {
	v := reflect.ValueOf(req).Elem()
	topics := v.FieldByName("Topics")
	orig := reflect.ValueOf(topics.Interface())
	kept := reflect.MakeSlice(topics.Type(), 0, topics.Len())
	for i := 0; i < topics.Len(); i++ {
		t := topics.Index(i)
		name, id := topicOf(t, img)
		parts := t.FieldByName("Partitions")
		if parts.Kind() != reflect.Slice {
			if !rule.MatchEntity(fault.Entity{Topic: name, TopicID: id, Partition: -1}) {
				kept = reflect.Append(kept, t)
			}
			continue
		}
		keptParts := reflect.MakeSlice(parts.Type(), 0, parts.Len())
		for j := 0; j < parts.Len(); j++ {
			p, ok := partitionOf(parts.Index(j))
			if !ok || !rule.MatchEntity(fault.Entity{Topic: name, TopicID: id, Partition: p}) {
				keptParts = reflect.Append(keptParts, parts.Index(j))
			}
		}
		if keptParts.Len() > 0 {
			nt := reflect.New(t.Type()).Elem()
			nt.Set(t)
			nt.FieldByName("Partitions").Set(keptParts)
			kept = reflect.Append(kept, nt)
		}
	}
	topics.Set(kept)
	wait := v.FieldByName("MaxWaitMillis")
	origWait := int64(0)
	if wait.Kind() == reflect.Int32 {
		origWait = wait.Int()
		wait.SetInt(0)
	}
	return func() {
		topics.Set(orig)
		if wait.Kind() == reflect.Int32 {
			wait.SetInt(origWait)
		}
	}
}

// addEntityErrors sets code on each failed topic-partition of resp,
// replacing what the handler answered for it (after) or adding it (it was
// not served). The entry is what Kafka answers for a failed partition:
// kmsg's defaults with every offset -1.
func addEntityErrors(resp kmsg.Response, failed []fault.Entity, code int16) {
	topics := reflect.ValueOf(resp).Elem().FieldByName("Topics")
	if topics.Kind() != reflect.Slice {
		return
	}
	for _, e := range failed {
		ti := findTopic(topics, e)
		if ti < 0 {
			t := newDefault(topics.Type().Elem())
			if f := t.FieldByName("Topic"); f.Kind() == reflect.String {
				f.SetString(e.Topic)
			} else if f.Kind() == reflect.Pointer && f.Type().Elem().Kind() == reflect.String {
				name := e.Topic
				f.Set(reflect.ValueOf(&name))
			}
			if f := t.FieldByName("TopicID"); f.IsValid() && f.Type() == reflect.TypeOf(e.TopicID) {
				f.Set(reflect.ValueOf(e.TopicID))
			}
			topics.Set(reflect.Append(topics, t))
			ti = topics.Len() - 1
		}
		t := topics.Index(ti)
		parts := t.FieldByName("Partitions")
		if e.Partition < 0 || parts.Kind() != reflect.Slice {
			if f := t.FieldByName("ErrorCode"); f.Kind() == reflect.Int16 {
				f.SetInt(int64(code))
			}
			continue
		}
		p := newDefault(parts.Type().Elem())
		p.FieldByName("Partition").SetInt(int64(e.Partition))
		p.FieldByName("ErrorCode").SetInt(int64(code))
		replaced := false
		for j := 0; j < parts.Len(); j++ {
			if pn, _ := partitionOf(parts.Index(j)); pn == e.Partition {
				parts.Index(j).Set(p)
				replaced = true
				break
			}
		}
		if !replaced {
			parts.Set(reflect.Append(parts, p))
		}
	}
}

// findTopic finds e's topic in an answer's topics by name, else by id.
func findTopic(topics reflect.Value, e fault.Entity) int {
	for i := 0; i < topics.Len(); i++ {
		t := topics.Index(i)
		if name := stringField(t, "Topic"); name != "" && name == e.Topic {
			return i
		}
		if f := t.FieldByName("TopicID"); f.IsValid() && f.Type() == reflect.TypeOf(e.TopicID) &&
			e.TopicID != ([16]byte{}) && f.Interface().([16]byte) == e.TopicID {
			return i
		}
	}
	return -1
}

// newDefault is a new value of t as Kafka fills one for an error: every
// offset and timestamp (int64) -1, and leader ids and epochs -1 (DivergingEpoch, SnapshotID), in nested
// structs too (KIP-951's CurrentLeader: 0 would name node 0). This is
// kmsg's Default() for these fields; calling Default itself through an
// interface would keep every kmsg type's Default method in the binary.
func newDefault(t reflect.Type) reflect.Value {
	v := reflect.New(t).Elem()
	errorDefaults(v)
	return v
}

func errorDefaults(v reflect.Value) {
	for i := 0; i < v.NumField(); i++ {
		f, sf := v.Field(i), v.Type().Field(i)
		if !sf.IsExported() {
			continue
		}
		switch {
		case f.Kind() == reflect.Int64:
			f.SetInt(-1)
		case f.Kind() == reflect.Int32 && (strings.HasSuffix(sf.Name, "LeaderID") || strings.HasSuffix(sf.Name, "Epoch") || sf.Name == "PreferredReadReplica"):
			f.SetInt(-1)
		case f.Kind() == reflect.Struct && sf.Name != "UnknownTags":
			errorDefaults(f)
		}
	}
}

// validateFaultRule checks what a rule needs of the API it names: that
// sharq serves the API and versions, and that its answer has where the
// error goes.
func validateFaultRule(r *fault.Rule) error {
	if r.API == nil {
		if r.Error != nil && r.Scope == fault.ScopeEntity {
			return errors.New(`scope "entity" needs api`)
		}
		return nil
	}
	key := int16(*r.API)
	api := lookupAPI(key)
	if api == nil {
		return fmt.Errorf("api %s: sharq does not serve it", kmsg.NameForKey(key))
	}
	if (r.MinVersion != nil && *r.MinVersion > api.maxVersion) || (r.MaxVersion != nil && *r.MaxVersion < api.minVersion) {
		return fmt.Errorf("api %s: sharq serves versions %d-%d", kmsg.NameForKey(key), api.minVersion, api.maxVersion)
	}
	if r.Error == nil {
		return nil
	}
	hasTop := hasTopError(kmsg.RequestForKey(key).ResponseKind())
	switch r.EffectiveScope(hasTop) {
	case fault.ScopeRequest:
		if !hasTop {
			return fmt.Errorf(`api %s: its answer has no top-level error code; use scope "entity"`, kmsg.NameForKey(key))
		}
	case fault.ScopeEntity:
		if !supportsEntities(key) {
			return fmt.Errorf(`api %s: its answer has no topics to fail one by one; use scope "request"`, kmsg.NameForKey(key))
		}
	}
	return nil
}

// initFaults makes the rule set, with the rules of sharq.faults.
func (s *Server) initFaults() error {
	s.faults.Set = fault.NewSet(validateFaultRule)
	rules, err := fault.ParseRules(s.cfg.Faults())
	if err != nil {
		return fmt.Errorf("sharq.faults: %w", err)
	}
	for i, r := range rules {
		added, err := s.faults.Add(r)
		if err != nil {
			return fmt.Errorf("sharq.faults: rule %d: %w", i+1, err)
		}
		s.logger.Warn("fault rule set from sharq.faults", slog.Int64("rule", added.ID), slog.String("effect", added.Effect()))
	}
	return nil
}

var (
	descFaultsInjected = newDesc("sharq_faults_injected_total",
		"Requests a fault rule fired on (its hits), by rule id and effect; a removed rule's series goes with it.", kindCounter, "rule", "effect")
	descFaultRules = newDesc("sharq_fault_rules",
		"Fault rules that can still fire.", kindGauge)
	descShareFaults = newDesc("sharq_share_faults_injected_total",
		"Share-group faults injected through the control API: records whose locks were expired (locks_expired) or released for redelivery (redelivered), share sessions evicted, acknowledgements and dead-letter writes failed.", kindCounter, "fault")
)

// collectFaults exposes each rule's hits.
func collectFaults(s *Server, e *expo) {
	live := 0
	for _, st := range s.faults.List() {
		e.add(descFaultsInjected, float64(st.Hits), strconv.FormatInt(st.ID, 10), st.Effect())
		if !st.Done {
			live++
		}
	}
	e.add(descFaultRules, float64(live))
	if s.coordinatorsLoaded() && s.share != nil {
		fc := s.share.FaultCounts()
		e.add(descShareFaults, float64(fc.LocksExpired), "locks_expired")
		e.add(descShareFaults, float64(fc.Redelivered), "redelivered")
		e.add(descShareFaults, float64(fc.SessionsEvicted), "sessions_evicted")
		e.add(descShareFaults, float64(fc.AcksFailed), "acks_failed")
		e.add(descShareFaults, float64(fc.DLQWritesFailed), "dlq_writes_failed")
	}
}
