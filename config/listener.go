package config

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// ParseListeners parses a listeners / advertised.listeners value: a comma
// list of NAME://host:port, where host may be empty, a name, an IPv4 address
// or a bracketed IPv6 address, and port 0 asks for a free port. Security
// protocols are filled in from protocolMap (Kafka's
// listener.security.protocol.map); a nil map means Kafka's default map.
func ParseListeners(key, value string, protocolMap map[string]string) ([]Listener, error) {
	if protocolMap == nil {
		protocolMap = defaultProtocolMap()
	}
	var out []Listener
	if strings.TrimSpace(value) == "" {
		return nil, nil
	}
	for _, part := range strings.Split(value, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		l, err := parseListener(part)
		if err != nil {
			return nil, invalid(key, value, err.Error())
		}
		l.Protocol = protocolMap[l.Name]
		out = append(out, l)
	}
	if err := checkListeners(key, out, protocolMap, key == "advertised.listeners"); err != nil {
		return nil, err
	}
	return out, nil
}

func parseListener(s string) (Listener, error) {
	sep := strings.Index(s, "://")
	if sep <= 0 {
		return Listener{}, fmt.Errorf("listener %q is not of the form NAME://host:port", s)
	}
	name, rest := s[:sep], s[sep+3:]
	for _, r := range name {
		if !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
			return Listener{}, fmt.Errorf("listener name %q has invalid character %q", name, r)
		}
	}
	var host, port string
	if strings.HasPrefix(rest, "[") {
		end := strings.Index(rest, "]")
		if end < 0 || end+1 >= len(rest) || rest[end+1] != ':' {
			return Listener{}, fmt.Errorf("listener %q: bracketed IPv6 host must be followed by :port", s)
		}
		host, port = rest[1:end], rest[end+2:]
	} else {
		colon := strings.LastIndexByte(rest, ':')
		if colon < 0 {
			return Listener{}, fmt.Errorf("listener %q has no port", s)
		}
		host, port = rest[:colon], rest[colon+1:]
		if strings.Contains(host, ":") {
			return Listener{}, fmt.Errorf("listener %q: an IPv6 host must be in brackets, e.g. [::1]:9092", s)
		}
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < 0 || p > 65535 {
		return Listener{}, fmt.Errorf("listener %q: port %q is not in 0..65535", s, port)
	}
	// Kafka normalises listener names to upper case (ListenerName.normalised).
	return Listener{Name: strings.ToUpper(name), Host: host, Port: p}, nil
}

func checkListeners(key string, ls []Listener, protocolMap map[string]string, advertised bool) error {
	if protocolMap == nil {
		protocolMap = defaultProtocolMap()
	}
	names := map[string]bool{}
	ports := map[string]bool{}
	for _, l := range ls {
		if names[l.Name] {
			return invalid(key, formatListeners(ls), "Each listener must have a different name, listener "+l.Name+" appears twice")
		}
		names[l.Name] = true
		if l.Port < 0 || l.Port > 65535 {
			return invalid(key, formatListeners(ls), fmt.Sprintf("listener %s: port %d is not in 0..65535", l.Name, l.Port))
		}
		if advertised && l.Host == "0.0.0.0" {
			return invalid(key, formatListeners(ls), "advertised.listeners cannot use the nonroutable meta-address 0.0.0.0. Use a routable IP address.")
		}
		if !advertised && l.Port != 0 {
			hp := l.Host + "|" + strconv.Itoa(l.Port)
			if ports[hp] {
				return invalid(key, formatListeners(ls), fmt.Sprintf("Each listener must have a different port, port %d appears twice", l.Port))
			}
			ports[hp] = true
		}
		if _, ok := protocolMap[l.Name]; !ok {
			return invalid(key, formatListeners(ls), "No security protocol defined for listener "+l.Name+" in listener.security.protocol.map")
		}
	}
	return nil
}

func formatListeners(ls []Listener) string {
	s := make([]string, len(ls))
	for i, l := range ls {
		s[i] = l.String()
	}
	return strings.Join(s, ",")
}

var securityProtocols = []string{"PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"}

func defaultProtocolMap() map[string]string {
	m := map[string]string{}
	for _, p := range securityProtocols {
		m[p] = p
	}
	return m
}

// parseProtocolMap parses listener.security.protocol.map: NAME:PROTOCOL,...
func parseProtocolMap(s string) (map[string]string, error) {
	m := map[string]string{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, proto, ok := strings.Cut(part, ":")
		name, proto = strings.ToUpper(strings.TrimSpace(name)), strings.ToUpper(strings.TrimSpace(proto))
		if !ok || name == "" {
			return nil, fmt.Errorf("%q is not of the form NAME:PROTOCOL", part)
		}
		known := false
		for _, p := range securityProtocols {
			known = known || p == proto
		}
		if !known {
			return nil, fmt.Errorf("listener %s: unknown security protocol %q (one of %s)", name, proto, strings.Join(securityProtocols, ", "))
		}
		if _, dup := m[name]; dup {
			return nil, fmt.Errorf("listener %s appears twice", name)
		}
		m[name] = proto
	}
	return m, nil
}

func formatProtocolMap(m map[string]string) string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	// Kafka's default lists the protocols in enum order; keep that order for
	// the default names and sort the rest, so the default round-trips.
	order := map[string]int{}
	for i, p := range securityProtocols {
		order[p] = i + 1
	}
	sort.Slice(names, func(i, j int) bool {
		oi, oj := order[names[i]], order[names[j]]
		if oi != 0 && oj != 0 {
			return oi < oj
		}
		if oi != 0 || oj != 0 {
			return oi != 0
		}
		return names[i] < names[j]
	})
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = n + ":" + m[n]
	}
	return strings.Join(parts, ",")
}
