package schema

// The records of the _schemas topic, byte for byte as Confluent's registry
// writes them (storage/*Key.java, *Value.java, SchemaRegistrySerializer,
// Jackson with NON_EMPTY inclusion), so that either registry can read what
// the other wrote:
//
//	key                                                          value
//	{"keytype":"SCHEMA","subject":S,"version":V,"magic":1}       {"subject":S,"version":V,"id":N,"schemaType":T,
//	                                                              "references":[...],"metadata":{...},"ruleSet":{...},
//	                                                              "schema":TEXT,"deleted":false}  (null: hard delete)
//	{"keytype":"CONFIG","subject":S,"magic":0}                   {"subject":S,"compatibilityLevel":"FULL",...} (null: delete)
//	{"keytype":"MODE","subject":S,"magic":0}                     {"subject":S,"mode":"READONLY"} (null: delete)
//	{"keytype":"DELETE_SUBJECT","subject":S,"magic":0}           {"subject":S,"version":V}: versions 1..V soft-deleted
//	{"keytype":"CLEAR_SUBJECT","subject":S,"magic":0}            {"subject":S}: forget S's deleted versions
//	{"keytype":"CONTEXT","tenant":"default","context":C,"magic":0} {"tenant":"default","context":C}
//	{"keytype":"NOOP","magic":0}                                 ignored by Confluent (see below)
//
// The global config and mode have keys without a subject. Keys with a
// keytype this registry does not know (ASSOC, Confluent's associations)
// are skipped, as are records that do not decode; the reader logs them.
//
// Migration note: sharq adds one thing Confluent's reader ignores: a NOOP
// record whose value is {"sharqMaxIds":{context:id,...}}, written after a
// hard delete. Compaction may remove a hard-deleted schema's last record,
// and with it the highest id ever given; the NOOP keeps that id so ids are
// never reused after a restart. Confluent skips NOOP values unread.

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

// Key types (SchemaRegistryKeyType).
const (
	keySchema        = "SCHEMA"
	keyConfig        = "CONFIG"
	keyMode          = "MODE"
	keyNoop          = "NOOP"
	keyDeleteSubject = "DELETE_SUBJECT"
	keyClearSubject  = "CLEAR_SUBJECT"
	keyContext       = "CONTEXT"
)

const defaultTenant = "default"

// recordKey is a decoded key. Subject "" is a key without one (the
// global config and mode).
type recordKey struct {
	Type    string
	Subject string
	Version int32
	Magic   int
	Tenant  string
	Context string
}

// errUnknownKeyType marks a key of a type this registry skips.
var errUnknownKeyType = errors.New("unknown schema registry key type")

// The key structs fix Confluent's @JsonPropertyOrder.
type schemaKeyJSON struct {
	Keytype string `json:"keytype"`
	Subject string `json:"subject,omitempty"`
	Version int32  `json:"version"`
	Magic   int    `json:"magic"`
}

type subjectKeyJSON struct {
	Keytype string `json:"keytype"`
	Subject string `json:"subject,omitempty"`
	Magic   int    `json:"magic"`
}

type contextKeyJSON struct {
	Keytype string `json:"keytype"`
	Tenant  string `json:"tenant,omitempty"`
	Context string `json:"context,omitempty"`
	Magic   int    `json:"magic"`
}

func encodeKey(k recordKey) []byte {
	switch k.Type {
	case keySchema:
		return marshal(schemaKeyJSON{k.Type, k.Subject, k.Version, 1})
	case keyContext:
		return marshal(contextKeyJSON{k.Type, k.Tenant, k.Context, 0})
	case keyNoop:
		return marshal(struct {
			Keytype string `json:"keytype"`
			Magic   int    `json:"magic"`
		}{k.Type, 0})
	}
	return marshal(subjectKeyJSON{k.Type, k.Subject, 0})
}

// decodeKey reads any key Confluent writes. Field order and unknown fields
// do not matter (Jackson ignores unknown properties).
func decodeKey(b []byte) (recordKey, error) {
	var raw struct {
		Keytype *string `json:"keytype"`
		Subject *string `json:"subject"`
		Version *int32  `json:"version"`
		Magic   int     `json:"magic"`
		Tenant  string  `json:"tenant"`
		Context string  `json:"context"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return recordKey{}, fmt.Errorf("key: %w", err)
	}
	if raw.Keytype == nil {
		return recordKey{}, errors.New("key has no keytype")
	}
	k := recordKey{Type: *raw.Keytype, Magic: raw.Magic, Tenant: raw.Tenant, Context: raw.Context}
	if raw.Subject != nil {
		k.Subject = *raw.Subject
	}
	switch k.Type {
	case keySchema:
		if raw.Magic != 0 && raw.Magic != 1 {
			return k, fmt.Errorf("can't deserialize schema for the magic byte %d", raw.Magic)
		}
		if raw.Version == nil {
			return k, errors.New("SCHEMA key has no version")
		}
		k.Version = *raw.Version
	case keyConfig, keyMode, keyNoop, keyDeleteSubject, keyClearSubject, keyContext:
	default:
		return k, fmt.Errorf("%w: %s", errUnknownKeyType, k.Type)
	}
	return k, nil
}

// schemaValue is a SCHEMA record's value, fields in the order Jackson
// writes SchemaValue (its creator's parameters).
type schemaValue struct {
	Subject    string      `json:"subject,omitempty"`
	Version    int32       `json:"version"`
	ID         int32       `json:"id"`
	MD5        string      `json:"md5,omitempty"`
	SchemaType string      `json:"schemaType,omitempty"`
	References []Reference `json:"references,omitempty"`
	Metadata   *Metadata   `json:"metadata,omitempty"`
	RuleSet    *RuleSet    `json:"ruleSet,omitempty"`
	Schema     string      `json:"schema,omitempty"`
	Deleted    bool        `json:"deleted"`
}

// configValue is a CONFIG record's value and the registry's config entity.
type configValue struct {
	Subject             string    `json:"subject,omitempty"`
	Alias               *string   `json:"alias,omitempty"`
	AliasForDeks        *string   `json:"aliasForDeks,omitempty"`
	Normalize           *bool     `json:"normalize,omitempty"`
	ValidateFields      *bool     `json:"validateFields,omitempty"`
	ValidateNewSchemas  *bool     `json:"validateNewSchemas,omitempty"`
	ValidateRules       *bool     `json:"validateRules,omitempty"`
	CompatibilityLevel  *string   `json:"compatibilityLevel,omitempty"`
	CompatibilityPolicy *string   `json:"compatibilityPolicy,omitempty"`
	CompatibilityGroup  *string   `json:"compatibilityGroup,omitempty"`
	DefaultMetadata     *Metadata `json:"defaultMetadata,omitempty"`
	OverrideMetadata    *Metadata `json:"overrideMetadata,omitempty"`
	DefaultRuleSet      *RuleSet  `json:"defaultRuleSet,omitempty"`
	OverrideRuleSet     *RuleSet  `json:"overrideRuleSet,omitempty"`
}

type modeValue struct {
	Subject string `json:"subject,omitempty"`
	Mode    string `json:"mode,omitempty"`
}

type deleteSubjectValue struct {
	Subject string `json:"subject,omitempty"`
	Version int32  `json:"version"`
}

type clearSubjectValue struct {
	Subject string `json:"subject,omitempty"`
}

type contextValue struct {
	Tenant  string `json:"tenant,omitempty"`
	Context string `json:"context,omitempty"`
}

type noopValue struct {
	MaxIDs map[string]int32 `json:"sharqMaxIds,omitempty"`
}

// decodeSchemaValue applies SchemaValue's defaults (AVRO) and Confluent's
// normalisation of metadata and rules.
func decodeSchemaValue(b []byte) (*schemaValue, error) {
	var v schemaValue
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("schema value: %w", err)
	}
	if v.SchemaType == "" {
		v.SchemaType = "AVRO"
	}
	v.Metadata.normalize()
	if err := v.RuleSet.normalize(); err != nil {
		return nil, fmt.Errorf("schema value: %w", err)
	}
	return &v, nil
}

// hash is the value's MD5: the stored one when Confluent wrote it (md5 is
// base64), computed otherwise.
func (v *schemaValue) hash() [16]byte {
	if v.MD5 != "" {
		if b, err := base64.StdEncoding.DecodeString(v.MD5); err == nil && len(b) == 16 {
			return [16]byte(b)
		}
	}
	return schemaHash(v.Schema, v.References, v.Metadata, v.RuleSet)
}

func decodeConfigValue(b []byte) (*configValue, error) {
	var v configValue
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("config value: %w", err)
	}
	if v.CompatibilityLevel != nil {
		l, ok := parseLevel(*v.CompatibilityLevel)
		if !ok {
			return nil, fmt.Errorf("config value: unknown compatibility level %q", *v.CompatibilityLevel)
		}
		v.CompatibilityLevel = &l
	}
	for _, m := range []*Metadata{v.DefaultMetadata, v.OverrideMetadata} {
		m.normalize()
	}
	for _, rs := range []*RuleSet{v.DefaultRuleSet, v.OverrideRuleSet} {
		if err := rs.normalize(); err != nil {
			return nil, fmt.Errorf("config value: %w", err)
		}
	}
	return &v, nil
}

func decodeModeValue(b []byte) (*modeValue, error) {
	var v modeValue
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("mode value: %w", err)
	}
	if !slices.Contains(modes, v.Mode) {
		return nil, fmt.Errorf("mode value: unknown mode %q", v.Mode)
	}
	return &v, nil
}

func decodeInto(b []byte, v any, what string) error {
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s value: %w", what, err)
	}
	return nil
}

// marshal is encoding/json without HTML escaping: Jackson writes <, > and
// & as they are, and the records must be the same bytes.
func marshal(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Only the registry's own types are marshalled; they always encode.
		panic(fmt.Sprintf("schema: marshal %T: %v", v, err))
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}
