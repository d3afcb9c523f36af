package broker

// The /ui page on the metrics listener: topics, consumer groups, share
// groups and a drawing of every share-partition's in-flight window
// (SPSO..SPEO, each range coloured by state with its delivery count), the
// picture the Kafka share-group docs draw by hand, refreshed every second
// from /ui/state.
//
// The page is one static file with inline CSS and JS (no build step, no
// external resources: brokers often run where there is no internet). The
// first snapshot is embedded in it so it draws without a round trip; names
// only ever reach the DOM through textContent, and the embedded JSON has
// <, > and & escaped, so a group named "<script>" is just text.

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"time"

	"sharq/broker/fault"
	"sharq/group"
	"sharq/raftmeta"
	"sharq/share"
)

//go:embed ui/index.html
var uiPage []byte

// uiStatePlaceholder is where the page carries its first snapshot.
const uiStatePlaceholder = "__SHARQ_UI_STATE__"

// uiMaxRanges caps the ranges drawn per share-partition: a window of
// share.partition.max.record.locks single-offset ranges is thousands of
// SVG rectangles per refresh, and nobody reads them one by one.
const uiMaxRanges = 500

// uiState is the /ui/state document. Every list is sorted (topics and
// groups by name, partitions by index, ranges by offset) so the encoding is
// stable for a given broker state.
type uiState struct {
	Now            int64          `json:"now"` // unix ms, for lock countdowns
	MaxRanges      int            `json:"maxRanges"`
	Topics         []uiTopic      `json:"topics"`
	ConsumerGroups []uiGroup      `json:"consumerGroups"`
	ShareGroups    []uiShareGroup `json:"shareGroups"`
	// Faults are the fault rules with their hits, ShareFaults the
	// share-group faults injected so far (faults.go).
	Faults      []fault.Status     `json:"faults"`
	ShareFaults *share.FaultCounts `json:"shareFaults"`
}

type uiTopic struct {
	Name       string        `json:"name"`
	ID         string        `json:"id"`
	Partitions []uiPartition `json:"partitions"`
}

type uiPartition struct {
	Partition     int32 `json:"partition"`
	LogStart      int64 `json:"logStart"`
	HighWatermark int64 `json:"highWatermark"`
	LogEnd        int64 `json:"logEnd"`
}

type uiGroup struct {
	ID      string          `json:"id"`
	Type    string          `json:"type"`
	State   string          `json:"state"`
	Members []uiMember      `json:"members"`
	Offsets []uiGroupOffset `json:"offsets"`
}

type uiMember struct {
	ID         string `json:"id"`
	ClientID   string `json:"clientId"`
	ClientHost string `json:"clientHost"`
}

type uiGroupOffset struct {
	Topic         string `json:"topic"`
	Partition     int32  `json:"partition"`
	Committed     int64  `json:"committed"`
	HighWatermark int64  `json:"highWatermark"` // -1: partition not open here
	Lag           int64  `json:"lag"`           // -1: unknown
}

type uiShareGroup struct {
	ID         string             `json:"id"`
	State      string             `json:"state"`
	Epoch      int32              `json:"epoch"`
	Members    []uiShareMember    `json:"members"`
	Partitions []uiSharePartition `json:"partitions"`
	// Modes lists the sharq-only group modes turned on (key-ordered
	// delivery, redelivery backoff, persisted delivery counts).
	Modes []string `json:"modes"`
}

type uiShareMember struct {
	ID         string   `json:"id"`
	ClientID   string   `json:"clientId"`
	ClientHost string   `json:"clientHost"`
	Epoch      int32    `json:"epoch"`
	Assigned   []string `json:"assigned"` // "topic-partition", sorted
}

type uiSharePartition struct {
	Topic         string `json:"topic"`
	Partition     int32  `json:"partition"`
	Initialised   bool   `json:"initialised"`
	SPSO          int64  `json:"spso"`
	SPEO          int64  `json:"speo"`
	StateEpoch    int32  `json:"stateEpoch"`
	LogStart      int64  `json:"logStart"`      // -1: partition not open here
	HighWatermark int64  `json:"highWatermark"` // -1: partition not open here
	Lag           int64  `json:"lag"`           // -1: unknown
	// Ranges holds at most MaxRanges ranges; RangesTotal says how many the
	// window has.
	Ranges      []uiRange `json:"ranges"`
	RangesTotal int       `json:"rangesTotal"`
}

type uiRange struct {
	First         int64  `json:"first"`
	Last          int64  `json:"last"`
	State         string `json:"state"`
	DeliveryCount int16  `json:"deliveryCount"`
	Owner         string `json:"owner,omitempty"`
	LockDeadline  int64  `json:"lockDeadline,omitempty"` // unix ms, Acquired only
	// BackoffUntil: an Available range waiting out its redelivery backoff
	// (sharq.share.redelivery.backoff.ms) until this unix ms.
	BackoffUntil int64 `json:"backoffUntil,omitempty"`
	// KeyHeld: an Available range of a key-ordered group whose keys are
	// held by records in flight, or wait behind earlier ones.
	KeyHeld bool `json:"keyHeld,omitempty"`
}

// registerUI adds /ui (the page) and /ui/state (its JSON) to the metrics
// listener's mux.
func (s *Server) registerUI(mux *http.ServeMux) {
	mux.HandleFunc("/ui", s.serveUIPage)
	mux.HandleFunc("/ui/state", s.serveUIState)
}

func uiMethodOK(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return false
	}
	return true
}

func (s *Server) serveUIPage(w http.ResponseWriter, r *http.Request) {
	if !uiMethodOK(w, r) {
		return
	}
	state, err := json.Marshal(s.uiSnapshot(time.Now()))
	if err != nil {
		http.Error(w, "encode state: "+err.Error(), http.StatusInternalServerError)
		return
	}
	// json.Marshal escapes <, > and &, so the snapshot cannot close the
	// <script type="application/json"> element it sits in.
	page := bytes.Replace(uiPage, []byte(uiStatePlaceholder), state, 1)
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	// Everything is inline; nothing may be loaded from elsewhere.
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src data:")
	w.Write(page)
}

func (s *Server) serveUIState(w http.ResponseWriter, r *http.Request) {
	if !uiMethodOK(w, r) {
		return
	}
	body, err := json.Marshal(s.uiSnapshot(time.Now()))
	if err != nil {
		http.Error(w, "encode state: "+err.Error(), http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.Write(append(body, '\n'))
}

// uiSnapshot reads the broker state the page shows. It holds one lock
// domain at a time: partsMu (with the logs' own locks inside, as the
// metrics collector does), the group coordinator's, then the share
// manager's (its coordinator, then each share-partition alone: see the
// lock order on share.Manager), so a page open in a browser costs the hot
// paths only short waits.
func (s *Server) uiSnapshot(now time.Time) *uiState {
	st := &uiState{
		Now:            now.UnixMilli(),
		MaxRanges:      uiMaxRanges,
		Topics:         []uiTopic{},
		ConsumerGroups: []uiGroup{},
		ShareGroups:    []uiShareGroup{},
		Faults:         s.faults.List(),
	}
	hw := map[group.TopicPartition]uiPartition{}
	s.partsMu.RLock()
	for name, tp := range s.topics {
		t := uiTopic{Name: name, ID: tp.id.String(), Partitions: []uiPartition{}}
		for _, p := range tp.parts {
			if p == nil {
				continue
			}
			up := uiPartition{Partition: p.index, LogStart: -1, HighWatermark: -1, LogEnd: -1}
			if ps, ok := p.stats(); ok {
				up.LogStart, up.HighWatermark, up.LogEnd = ps.LogStartOffset, ps.HighWatermark, ps.LogEndOffset
			}
			t.Partitions = append(t.Partitions, up)
			hw[group.TopicPartition{Topic: name, Partition: p.index}] = up
		}
		st.Topics = append(st.Topics, t)
	}
	s.partsMu.RUnlock()
	sort.Slice(st.Topics, func(i, j int) bool { return st.Topics[i].Name < st.Topics[j].Name })

	if !s.coordinatorsLoaded() {
		return st // groups appear once the coordinators have loaded
	}
	if s.coord.groups != nil {
		st.ConsumerGroups = s.uiConsumerGroups(hw)
	}
	if s.share != nil {
		st.ShareGroups = s.uiShareGroups(hw)
		fc := s.share.FaultCounts()
		st.ShareFaults = &fc
	}
	return st
}

func (s *Server) uiConsumerGroups(hw map[group.TopicPartition]uiPartition) []uiGroup {
	out := []uiGroup{}
	hwOf := func(tp group.TopicPartition) (int64, bool) {
		p, ok := hw[tp]
		return p.HighWatermark, ok
	}
	for _, o := range s.coord.groups.ListGroups() {
		g := uiGroup{ID: o.ID, Type: o.Type, State: o.State, Members: []uiMember{}, Offsets: []uiGroupOffset{}}
		switch o.Type {
		case group.TypeConsumer:
			if d, err := s.coord.groups.DescribeConsumer(o.ID); err == nil {
				for _, m := range d.Members {
					g.Members = append(g.Members, uiMember{ID: m.MemberID, ClientID: m.ClientID, ClientHost: m.ClientHost})
				}
			}
		case group.TypeStreams:
			if d, err := s.coord.groups.DescribeStreams(o.ID); err == nil {
				for _, m := range d.Members {
					g.Members = append(g.Members, uiMember{ID: m.MemberID, ClientID: m.ClientID, ClientHost: m.ClientHost})
				}
			}
		default:
			if d, err := s.coord.groups.DescribeClassic(o.ID); err == nil {
				for _, m := range d.Members {
					g.Members = append(g.Members, uiMember{ID: m.MemberID, ClientID: m.ClientID, ClientHost: m.ClientHost})
				}
			}
		}
		sort.Slice(g.Members, func(i, j int) bool { return g.Members[i].ID < g.Members[j].ID })
		// The group may have gone between ListGroups and here: it is then
		// shown without offsets.
		if lags, err := s.groupLags(o.ID, hwOf); err == nil {
			for _, l := range lags {
				g.Offsets = append(g.Offsets, uiGroupOffset{Topic: l.tp.Topic, Partition: l.tp.Partition,
					Committed: l.committed, HighWatermark: l.hw, Lag: l.lag})
			}
		}
		sort.Slice(g.Offsets, func(i, j int) bool {
			a, b := g.Offsets[i], g.Offsets[j]
			return a.Topic < b.Topic || a.Topic == b.Topic && a.Partition < b.Partition
		})
		out = append(out, g)
	}
	return out
}

func (s *Server) uiShareGroups(hw map[group.TopicPartition]uiPartition) []uiShareGroup {
	img := s.meta.Image()
	topicName := func(id [16]byte) (string, bool) {
		if t := img.TopicsByID[raftmeta.UUID(id)]; t != nil {
			return t.Name, true
		}
		return "", false
	}
	byID := map[string]*uiShareGroup{}
	s.share.WithCoordinator(func(c *share.Coordinator) {
		for _, id := range c.GroupIDs() {
			g := c.Group(id)
			ug := &uiShareGroup{ID: id, State: g.State(), Epoch: g.Epoch, Members: []uiShareMember{}, Partitions: []uiSharePartition{}}
			for _, m := range g.Members {
				um := uiShareMember{ID: m.ID, ClientID: m.ClientID, ClientHost: m.ClientHost, Epoch: m.Epoch, Assigned: []string{}}
				for tid, parts := range m.Assignment {
					name, ok := topicName(tid)
					if !ok {
						continue
					}
					for _, p := range parts {
						um.Assigned = append(um.Assigned, name+"-"+strconv.Itoa(int(p)))
					}
				}
				sort.Strings(um.Assigned)
				ug.Members = append(ug.Members, um)
			}
			sort.Slice(ug.Members, func(i, j int) bool { return ug.Members[i].ID < ug.Members[j].ID })
			byID[id] = ug
		}
	})

	for _, v := range s.share.Partitions(uiMaxRanges) {
		name, ok := topicName(v.Key.TopicID)
		if !ok {
			continue // topic deleted; its share state goes with it
		}
		up := uiSharePartition{Topic: name, Partition: v.Key.Partition, LogStart: -1, HighWatermark: -1, Lag: -1, Ranges: []uiRange{}}
		if lp, ok := hw[group.TopicPartition{Topic: name, Partition: v.Key.Partition}]; ok {
			up.LogStart, up.HighWatermark = lp.LogStart, lp.HighWatermark
		}
		up.SPSO, up.SPEO = -1, -1
		if v.Initialised {
			up.Initialised = true
			up.SPSO, up.SPEO, up.StateEpoch = v.SPSO, v.SPEO, v.StateEpoch
			if up.HighWatermark >= 0 {
				up.Lag = v.Lag
			}
			up.RangesTotal = v.WindowTotal
		}
		for _, r := range v.Window {
			ur := uiRange{First: r.FirstOffset, Last: r.LastOffset, State: r.State.String(), DeliveryCount: r.DeliveryCount}
			if r.State == share.Acquired {
				ur.Owner, ur.LockDeadline = r.Owner, r.LockDeadline.UnixMilli()
			}
			if !r.AvailableAt.IsZero() {
				ur.BackoffUntil = r.AvailableAt.UnixMilli()
			}
			ur.KeyHeld = r.KeyHeld
			up.Ranges = append(up.Ranges, ur)
		}
		ug := byID[v.Key.Group]
		if ug == nil {
			// State persisted for a group the coordinator no longer lists.
			ug = &uiShareGroup{ID: v.Key.Group, State: "Empty", Members: []uiShareMember{}, Partitions: []uiSharePartition{}}
			byID[v.Key.Group] = ug
		}
		ug.Partitions = append(ug.Partitions, up)
	}

	out := make([]uiShareGroup, 0, len(byID))
	for _, ug := range byID {
		ug.Modes = shareModes(s.shareSettings(ug.ID))
		sort.Slice(ug.Partitions, func(i, j int) bool {
			a, b := ug.Partitions[i], ug.Partitions[j]
			return a.Topic < b.Topic || a.Topic == b.Topic && a.Partition < b.Partition
		})
		out = append(out, *ug)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// shareModes describes the sharq-only modes a share group has turned on.
func shareModes(st share.Settings) []string {
	modes := []string{}
	if st.KeyOrdered {
		modes = append(modes, "key-ordered")
	}
	if st.Backoff.Enabled() {
		cfg := st.PartitionConfig().Effective().Backoff
		if cfg.Multiplier == 1 {
			modes = append(modes, fmt.Sprintf("redelivery backoff %v", cfg.Initial))
		} else {
			modes = append(modes, fmt.Sprintf("redelivery backoff %v x%g up to %v", cfg.Initial, cfg.Multiplier, cfg.Max))
		}
	}
	if st.PersistCounts {
		modes = append(modes, "delivery counts persisted")
	}
	return modes
}
