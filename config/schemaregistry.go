package config

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// Schema registry keys: sharq's own, named after Confluent's registry
// settings (listeners, kafkastore.topic, schema.compatibility.level,
// authentication.method) under schema.registry. The registry is off unless
// schema.registry.listeners is set.

func schemaRegistryKeyTable() []*keyDef {
	return []*keyDef{
		newKey("schema.registry.listeners", TypeList, "",
			"Listeners of the schema registry (Confluent's Schema Registry REST API), comma-separated: http://host:port or https://host:port (https takes the ssl.* key store, per listener listener.name.schema_registry.ssl.*; ssl.client.auth applies too). Empty: no schema registry.").
			own().withCustom(func(v any) string {
			if _, err := ParseSchemaRegistryListeners(v.([]string)); err != nil {
				return err.Error()
			}
			return ""
		}),
		newKey("schema.registry.topic", TypeString, "_schemas",
			"The compacted one-partition topic the schema registry keeps its records in, in Confluent's format (Confluent's kafkastore.topic). Created on start when missing.").
			own().withCustom(func(v any) string {
			if s := v.(string); s == "" || len(s) > 249 || strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != "" {
				return "must be a topic name"
			}
			return ""
		}),
		newKey("schema.registry.topic.replication.factor", TypeInt, "3",
			"Replication factor the schema registry creates its topic with, capped at the brokers registered (Confluent's kafkastore.topic.replication.factor).").
			own().check(atLeast(1)),
		newKey("schema.registry.compatibility.level", TypeString, "backward",
			"The default compatibility level of subjects without a config (Confluent's schema.compatibility.level).").
			own().check(inFold("none", "backward", "backward_transitive", "forward", "forward_transitive", "full", "full_transitive")),
		newKey("schema.registry.authentication.method", TypeString, "NONE",
			"HTTP authentication of the schema registry: NONE or BASIC (users and passwords from schema.registry.basic.auth.users.file, else the SCRAM credentials of AlterUserScramCredentials; the principal is User:<name>).").
			own().check(inFold("NONE", "BASIC")),
		newKey("schema.registry.authentication.realm", TypeString, "SchemaRegistry",
			"The realm named in the WWW-Authenticate header of a 401 (Confluent's authentication.realm).").own(),
		newKey("schema.registry.basic.auth.users.file", TypeString, "",
			"File of basic-auth users, one per line as in Confluent's (Jetty's) password file: name: password[,role...], the password plain or MD5:<hex>. Read at start. Empty: the SCRAM credentials.").
			own().nullDef(),
		newKey("schema.registry.group.id", TypeString, "schema-registry",
			"The registry's cluster id in GET /v1/metadata/id (Confluent's schema.registry.group.id).").own(),
	}
}

// SchemaRegistryListener is one schema.registry.listeners entry.
type SchemaRegistryListener struct {
	Scheme string // http or https
	Host   string
	Port   int
}

func (l SchemaRegistryListener) String() string {
	return l.Scheme + "://" + net.JoinHostPort(l.Host, strconv.Itoa(l.Port))
}

// ParseSchemaRegistryListeners parses http://host:port and https://host:port
// entries.
func ParseSchemaRegistryListeners(entries []string) ([]SchemaRegistryListener, error) {
	var out []SchemaRegistryListener
	for _, e := range entries {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		scheme, rest, ok := strings.Cut(e, "://")
		scheme = strings.ToLower(scheme)
		if !ok || (scheme != "http" && scheme != "https") {
			return nil, fmt.Errorf("%q is not http://host:port or https://host:port", e)
		}
		host, port, err := splitHostPort(strings.TrimSuffix(rest, "/"))
		if err != nil {
			return nil, fmt.Errorf("%q: %v", e, err)
		}
		out = append(out, SchemaRegistryListener{Scheme: scheme, Host: host, Port: port})
	}
	return out, nil
}

// SchemaRegistry is the schema registry's configuration; Listeners is
// empty when it is off.
type SchemaRegistry struct {
	Listeners         []SchemaRegistryListener
	Topic             string
	ReplicationFactor int
	Compatibility     string // upper case
	BasicAuth         bool
	Realm             string
	UsersFile         string
	GroupID           string
	// Security is the TLS setup of the https listeners: the ssl.* keys,
	// overridable as listener.name.schema_registry.ssl.*.
	Security ListenerSecurity
}

// SchemaRegistry returns the schema registry's configuration.
func (c *Config) SchemaRegistry() SchemaRegistry {
	get := func(key string) string {
		if v, ok := c.merged(key); ok {
			return strings.TrimSpace(v)
		}
		return brokerIndex[key].def
	}
	ls, _ := ParseSchemaRegistryListeners(strings.Split(get("schema.registry.listeners"), ",")) // checked when loaded
	rf, _ := strconv.Atoi(get("schema.registry.topic.replication.factor"))
	return SchemaRegistry{
		Listeners:         ls,
		Topic:             get("schema.registry.topic"),
		ReplicationFactor: rf,
		Compatibility:     strings.ToUpper(get("schema.registry.compatibility.level")),
		BasicAuth:         strings.EqualFold(get("schema.registry.authentication.method"), "BASIC"),
		Realm:             get("schema.registry.authentication.realm"),
		UsersFile:         get("schema.registry.basic.auth.users.file"),
		GroupID:           get("schema.registry.group.id"),
		Security:          c.Security(Listener{Name: "SCHEMA_REGISTRY", Protocol: "SSL"}),
	}
}
