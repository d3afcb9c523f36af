package config

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/viper"
)

// Action tells the caller what the command line asked for.
type Action int

const (
	// ActionServe: run the broker with the returned Config.
	ActionServe Action = iota
	// ActionHelp: print WriteHelp to stdout and exit 0.
	ActionHelp
	// ActionCheck: the configuration is valid (--check-config); exit 0.
	ActionCheck
)

// EnvPrefix starts every environment variable Load reads.
const EnvPrefix = "SHARQ_"

// EnvName is the environment variable for a key: SHARQ_ + the key with dots
// as underscores, upper case (log.dirs -> SHARQ_LOG_DIRS).
func EnvName(key string) string {
	return EnvPrefix + strings.ToUpper(strings.NewReplacer(".", "_", "-", "_").Replace(key))
}

// ErrUsage wraps command-line mistakes (unknown flag, --override without =).
var ErrUsage = errors.New("usage")

// setting is one raw key=value with where it came from.
type setting struct {
	key, value, origin string
	msg                string // for warnings; "" = the key is accepted but ignored
}

// Load builds the Config from the command line (args without the program
// name), the environment (environ as os.Environ gives it) and the config
// file named by --config (or a single positional argument, as
// kafka-server-start.sh takes it). Precedence, the later winning key by key:
// defaults < file < KAFKA_* environment (the apache/kafka image's
// convention, kafkaenv.go) < SHARQ_* environment < --override. Keys sharq
// accepts but ignores are logged as warnings to stderr (nil: discarded) and
// listed by Config.Ignored.
//
// With --help the Config is nil and the Action is ActionHelp. Every unknown
// key and invalid value is reported at once, each naming the key, its
// origin and the reason; the error wraps ErrUnknownConfig or
// ErrInvalidConfig.
func Load(args []string, environ []string, stderr io.Writer) (*Config, Action, error) {
	if stderr == nil {
		stderr = io.Discard
	}
	fs := flag.NewFlagSet("sharq", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var (
		file        string
		help, check bool
		overrides   []string
	)
	fs.StringVar(&file, "config", "", "config file: YAML or a Kafka server.properties")
	fs.BoolVar(&help, "help", false, "list every key with its default")
	fs.BoolVar(&help, "h", false, "list every key with its default")
	fs.BoolVar(&check, "check-config", false, "validate the configuration and exit")
	fs.Func("override", "key=value, repeatable; wins over file and environment", func(s string) error {
		overrides = append(overrides, s)
		return nil
	})
	rest := args
	for {
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, ActionHelp, nil
			}
			return nil, ActionServe, fmt.Errorf("%w: %v (see sharq --help)", ErrUsage, err)
		}
		rest = fs.Args()
		if len(rest) == 0 {
			break
		}
		// kafka-server-start.sh style: a positional config file among the flags.
		if file != "" {
			return nil, ActionServe, fmt.Errorf("%w: unexpected argument %q (config file already given)", ErrUsage, rest[0])
		}
		file, rest = rest[0], rest[1:]
	}
	if help {
		return nil, ActionHelp, nil
	}

	var layers [][]setting
	if file != "" {
		fl, err := readConfigFile(file)
		if err != nil {
			return nil, ActionServe, err
		}
		layers = append(layers, fl)
	}
	kenv := kafkaEnvSettings(environ)
	layers = append(layers, kenv.settings)
	env, unknownEnv := envSettings(environ)
	layers = append(layers, env)
	var ov []setting
	for _, o := range overrides {
		k, v, ok := strings.Cut(o, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, ActionServe, fmt.Errorf("%w: --override %q is not key=value", ErrUsage, o)
		}
		ov = append(ov, setting{key: strings.TrimSpace(k), value: v, origin: "--override"})
	}
	layers = append(layers, ov)

	c, warnings, err := build(layers)
	if err != nil {
		return nil, ActionServe, err
	}
	c.kafkaEnv = len(kenv.settings) > 0
	log := c.NewLogger(stderr)
	for _, u := range kenv.unknown {
		msg := "environment variable names no Kafka broker configuration sharq knows; ignored, as Kafka ignores unknown configs"
		if u.key == "" {
			msg = "environment variable is not of the KAFKA_<KEY> form (four or more underscores in a row); ignored"
		} else {
			msg += suggest(u.key)
		}
		log.Warn(msg, "variable", u.origin, "key", u.key)
	}
	if len(kenv.zookeeper) > 0 {
		log.Warn("ZooKeeper settings ignored: sharq keeps its metadata itself and needs no ZooKeeper",
			"variables", strings.Join(kenv.zookeeper, ","))
	}
	if len(kenv.launcher) > 0 {
		log.Warn("JVM and launcher settings have no effect in sharq (it is not a JVM)", "variables", strings.Join(kenv.launcher, ","))
	}
	for _, name := range unknownEnv {
		guess := strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(name, EnvPrefix), "_", "."))
		log.Warn("environment variable names no configuration key; ignored"+suggest(guess), "variable", name)
	}
	for _, w := range warnings {
		if w.msg != "" {
			log.Warn(w.msg, "key", w.key, "value", w.value, "from", w.origin)
			continue
		}
		log.Warn("config key accepted, has no effect in sharq", "key", w.key, "from", w.origin)
	}
	if check {
		return c, ActionCheck, nil
	}
	return c, ActionServe, nil
}

// NewLogger builds the process logger sharq.log.level / sharq.log.format ask
// for, writing to w.
func (c *Config) NewLogger(w io.Writer) *slog.Logger {
	if w == nil {
		w = io.Discard
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.LogLevel)); err != nil {
		level = slog.LevelInfo
	}
	opts := &slog.HandlerOptions{Level: level}
	if strings.EqualFold(c.LogFormat, "json") {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// build merges the layers through viper (defaults < file < env < override),
// then parses, validates and assigns every key.
func build(layers [][]setting) (*Config, []setting, error) {
	v := viper.NewWithOptions(viper.KeyDelimiter("::"))
	origin := map[string]string{}
	var errs []error
	for _, layer := range layers {
		for _, s := range layer {
			if _, known := brokerIndex[s.key]; !known && !hasIgnoredPrefix(s.key) {
				errs = append(errs, &Error{Key: s.key, Origin: s.origin, Err: ErrUnknownConfig,
					Reason: "not a sharq or Kafka broker configuration" + suggest(s.key)})
				continue
			}
			// Set is viper's highest layer; applying the layers in order
			// makes the last writer win, which is the precedence we want.
			v.Set(s.key, s.value)
			origin[s.key] = s.origin
		}
	}
	c := New()
	c.explicit = map[string]string{}
	keys := make([]string, 0, len(origin))
	for k := range origin {
		keys = append(keys, k)
	}
	// The protocol map first: listeners are resolved against it.
	sort.Slice(keys, func(i, j int) bool {
		pi, pj := keys[i] == "listener.security.protocol.map", keys[j] == "listener.security.protocol.map"
		if pi != pj {
			return pi
		}
		return keys[i] < keys[j]
	})
	var warnings []setting
	for _, name := range keys {
		raw := v.GetString(name)
		k := brokerIndex[name]
		if k == nil { // a family such as listener.name.*
			if base, ok := listenerKeyHonoured(name); ok {
				pv, err := base.parse(raw)
				if err != nil {
					errs = append(errs, withOrigin(invalid(name, strings.TrimSpace(raw), err.(*Error).Reason), origin[name]))
					continue
				}
				c.explicit[name] = formatTyped(pv)
				continue
			}
			c.explicit[name] = raw
			c.ignored = append(c.ignored, name)
			warnings = append(warnings, setting{key: name, value: raw, origin: origin[name]})
			continue
		}
		pv, err := k.parse(raw)
		if err != nil {
			errs = append(errs, withOrigin(err, origin[name]))
			continue
		}
		if k.set != nil {
			if err := k.set(c, pv); err != nil {
				errs = append(errs, withOrigin(err, origin[name]))
				continue
			}
		}
		c.explicit[name] = formatTyped(pv)
		if !k.impl || k.honours != nil && !k.honours(pv) {
			c.ignored = append(c.ignored, name)
			warnings = append(warnings, setting{key: name, value: raw, origin: origin[name]})
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, nil, err
	}
	before := c.Listeners
	c.fold()
	if _, ok := c.explicit["advertised.listeners"]; !ok {
		c.AdvertisedListeners = defaultAdvertised(c.Listeners)
	}
	if len(c.Listeners) < len(before) {
		kept := map[string]bool{}
		for _, l := range c.Listeners {
			kept[l.Name] = true
		}
		for _, l := range before {
			if !kept[l.Name] {
				warnings = append(warnings, setting{key: "listeners", value: l.String(), origin: origin["listeners"],
					msg: "controller listener not served: sharq's raft uses sharq.controller.listener"})
			}
		}
	}
	if err := c.Validate(); err != nil {
		return nil, nil, withOrigins(err, origin)
	}
	// Kafka's combined-mode configs (server.properties, the apache/kafka
	// image, every Testcontainers module) name the node itself as the only
	// voter on its CONTROLLER listener. Like that listener, the voter's
	// address is not bound: a quorum of one is sharq's single-node metadata,
	// which needs no raft transport. Raft over TCP stays what
	// sharq.controller.listener asks for.
	if vs, _ := parseVoters(c.ControllerQuorumVoters); c.ControllerListener == "" && len(vs) == 1 && vs[0].ID == c.NodeID {
		warnings = append(warnings, setting{key: "controller.quorum.voters", value: c.ControllerQuorumVoters, origin: origin["controller.quorum.voters"],
			msg: "the only voter is this node: single-node metadata, the voter's address is not bound (sharq.controller.listener runs raft over TCP)"})
		c.ControllerQuorumVoters = ""
	}
	return c, warnings, nil
}

// withOrigins names where each key of Validate's errors was set.
func withOrigins(err error, origin map[string]string) error {
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok {
		var ce *Error
		if errors.As(err, &ce) {
			return withOrigin(err, origin[ce.Key])
		}
		return err
	}
	var out []error
	for _, e := range joined.Unwrap() {
		out = append(out, withOrigins(e, origin))
	}
	return errors.Join(out...)
}

func withOrigin(err error, origin string) error {
	var ce *Error
	if errors.As(err, &ce) && ce.Origin == "" {
		cp := *ce
		cp.Origin = origin
		return &cp
	}
	return err
}

// suggest names a close known key for a typo ("log.dir" style mistakes).
func suggest(key string) string {
	best, bestD := "", 4
	for _, k := range brokerKeys {
		if d := editDistance(key, k.name, bestD); d < bestD {
			best, bestD = k.name, d
		}
	}
	if best == "" {
		return ""
	}
	return "; did you mean " + best + "?"
}

// editDistance is Levenshtein distance, giving up at limit.
func editDistance(a, b string, limit int) int {
	if d := len(a) - len(b); d >= limit || -d >= limit {
		return limit
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			rowMin = min(rowMin, cur[j])
		}
		if rowMin >= limit {
			return limit
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// envSettings picks the SHARQ_* variables that name a key. Others are
// returned by name and only warned about: the environment is shared with
// everything else on the machine (Kubernetes, for one, injects
// SHARQ_PORT=tcp://... for a service named sharq), so a stray variable must
// not stop the broker. An invalid value of a known key is still an error.
func envSettings(environ []string) ([]setting, []string) {
	byEnv := map[string]string{}
	for _, k := range brokerKeys {
		byEnv[EnvName(k.name)] = k.name
	}
	var out []setting
	var unknown []string
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(name, EnvPrefix) {
			continue
		}
		key, known := byEnv[name]
		if !known {
			unknown = append(unknown, name)
			continue
		}
		out = append(out, setting{key: key, value: value, origin: "environment " + name})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	sort.Strings(unknown)
	return out, unknown
}

// readConfigFile reads a YAML file (flat dotted keys, nested maps joined
// with dots) or a Java properties file. The format is chosen by extension
// (.properties, .yaml, .yml) and otherwise by content: a first setting line
// of the form key=value means properties.
func readConfigFile(path string) ([]setting, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config file: %w", err)
	}
	if isProperties(path, data) {
		props, err := ParseProperties(data)
		if err != nil {
			return nil, fmt.Errorf("config file %s: %w", path, err)
		}
		out := make([]setting, 0, len(props))
		for _, p := range props {
			out = append(out, setting{key: p.Key, value: p.Value, origin: path + ":" + strconv.Itoa(p.Line)})
		}
		return out, nil
	}
	return readYAML(path, data)
}

func isProperties(path string, data []byte) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".properties":
		return true
	case ".yaml", ".yml":
		return false
	}
	for _, line := range splitLines(string(data)) {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		if line[0] == '!' {
			return true // a properties-only comment
		}
		eq := strings.IndexByte(line, '=')
		colon := strings.IndexByte(line, ':')
		return eq >= 0 && (colon < 0 || eq < colon)
	}
	return false
}

func readYAML(path string, data []byte) ([]setting, error) {
	v := viper.NewWithOptions(viper.KeyDelimiter("::"))
	v.SetConfigType("yaml")
	if err := v.ReadConfig(bytes.NewReader(data)); err != nil {
		return nil, fmt.Errorf("config file %s: not valid YAML: %w", path, err)
	}
	keys := v.AllKeys()
	sort.Strings(keys)
	out := make([]setting, 0, len(keys))
	for _, k := range keys {
		if v.Get(k) == nil {
			continue // "key: ~" leaves the key unset
		}
		val, err := yamlScalar(v.Get(k))
		name := strings.ReplaceAll(k, "::", ".")
		if err != nil {
			return nil, &Error{Key: name, Origin: path, Err: ErrInvalidConfig, Value: fmt.Sprint(v.Get(k)), Reason: err.Error()}
		}
		out = append(out, setting{key: name, value: val, origin: path})
	}
	return out, nil
}

// yamlScalar turns a YAML value into the Kafka string form: scalars as
// written, a sequence of scalars as a comma list.
func yamlScalar(x any) (string, error) {
	switch t := x.(type) {
	case nil:
		return "", nil
	case string:
		return t, nil
	case bool:
		return strconv.FormatBool(t), nil
	case int:
		return strconv.Itoa(t), nil
	case int64:
		return strconv.FormatInt(t, 10), nil
	case uint64:
		return strconv.FormatUint(t, 10), nil
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64), nil
	case []any:
		parts := make([]string, len(t))
		for i, e := range t {
			s, err := yamlScalar(e)
			if err != nil {
				return "", err
			}
			if _, nested := e.([]any); nested {
				return "", errors.New("nested lists are not a config value")
			}
			parts[i] = s
		}
		return strings.Join(parts, ","), nil
	}
	return "", fmt.Errorf("a %T is not a config value (use a scalar or a list)", x)
}
