package schema

// The JSON bodies of the REST API (client/rest/entities), fields in the
// order Confluent 8.3 writes them, empty ones left out as its NON_EMPTY
// inclusion leaves them out.

import "fmt"

// schemaRequestJSON is RegisterSchemaRequest.
type schemaRequestJSON struct {
	Version    *int32          `json:"version"`
	ID         *int32          `json:"id"`
	SchemaType *string         `json:"schemaType"`
	References []referenceJSON `json:"references"`
	Metadata   *Metadata       `json:"metadata"`
	RuleSet    *RuleSet        `json:"ruleSet"`
	Schema     *string         `json:"schema"`
}

type referenceJSON struct {
	Name    *string `json:"name"`
	Subject *string `json:"subject"`
	Version *int32  `json:"version"`
}

// request converts the body; an enum Jackson would refuse is 400, a
// reference without its three fields Confluent's 42201.
func (j *schemaRequestJSON) request() (*SchemaRequest, *Error) {
	q := &SchemaRequest{Metadata: j.Metadata, RuleSet: j.RuleSet}
	if j.Schema != nil {
		q.Schema = *j.Schema
	}
	if j.SchemaType != nil {
		q.SchemaType = *j.SchemaType
	}
	if j.Version != nil {
		q.Version = *j.Version
	}
	if j.ID != nil {
		q.ID, q.HasID = *j.ID, true
	}
	typ := q.SchemaType
	if typ == "" {
		typ = "AVRO"
	}
	for _, r := range j.References {
		if r.Name == nil || r.Subject == nil || r.Version == nil {
			return nil, errInvalidSchema(fmt.Sprintf("Invalid schema of type %s, details: Invalid reference: {name=%s, subject=%s, version=%s}",
				typ, quoteOrNull(r.Name), quoteOrNull(r.Subject), intOrNull(r.Version)))
		}
		q.References = append(q.References, Reference{Name: *r.Name, Subject: *r.Subject, Version: int(*r.Version)})
	}
	q.Metadata.normalize()
	if err := q.RuleSet.normalize(); err != nil {
		return nil, errBadRequest(err.Error())
	}
	return q, nil
}

func quoteOrNull(s *string) string {
	if s == nil {
		return "null"
	}
	return "'" + *s + "'"
}

func intOrNull(v *int32) string {
	if v == nil {
		return "null"
	}
	return itoa(*v)
}

// schemaJSON is Schema: GET /subjects/{s}/versions/{v}, lookups, /schemas.
type schemaJSON struct {
	Subject    string      `json:"subject"`
	Version    int32       `json:"version"`
	ID         int32       `json:"id"`
	GUID       string      `json:"guid,omitempty"`
	SchemaType string      `json:"schemaType,omitempty"`
	References []Reference `json:"references,omitempty"`
	Metadata   *Metadata   `json:"metadata,omitempty"`
	RuleSet    *RuleSet    `json:"ruleSet,omitempty"`
	Schema     string      `json:"schema"`
	TS         int64       `json:"ts,omitempty"`
	Deleted    bool        `json:"deleted"`
}

func toSchemaJSON(v *Version) schemaJSON {
	return schemaJSON{Subject: v.Subject, Version: v.Version, ID: v.ID, GUID: v.GUID, SchemaType: v.Type,
		References: v.References, Metadata: v.Metadata, RuleSet: v.RuleSet, Schema: v.Schema, TS: v.TS, Deleted: v.Deleted}
}

// registerJSON is RegisterSchemaResponse.
type registerJSON struct {
	ID         int32       `json:"id"`
	Version    int32       `json:"version,omitempty"`
	GUID       string      `json:"guid,omitempty"`
	SchemaType string      `json:"schemaType,omitempty"`
	References []Reference `json:"references,omitempty"`
	Metadata   *Metadata   `json:"metadata,omitempty"`
	RuleSet    *RuleSet    `json:"ruleSet,omitempty"`
	Schema     string      `json:"schema,omitempty"`
}

// schemaStringJSON is SchemaString: GET /schemas/ids/{id}.
type schemaStringJSON struct {
	Subject    string      `json:"subject,omitempty"`
	Version    int32       `json:"version,omitempty"`
	GUID       string      `json:"guid,omitempty"`
	SchemaType string      `json:"schemaType,omitempty"`
	Schema     string      `json:"schema"`
	References []Reference `json:"references,omitempty"`
	Metadata   *Metadata   `json:"metadata,omitempty"`
	RuleSet    *RuleSet    `json:"ruleSet,omitempty"`
	MaxID      int32       `json:"maxId,omitempty"`
	TS         int64       `json:"ts,omitempty"`
	Deleted    bool        `json:"deleted"`
}

// configUpdateJSON is ConfigUpdateRequest as PUT /config answers it: the
// level under "compatibility".
type configUpdateJSON struct {
	Alias               *string   `json:"alias,omitempty"`
	AliasForDeks        *string   `json:"aliasForDeks,omitempty"`
	Normalize           *bool     `json:"normalize,omitempty"`
	ValidateFields      *bool     `json:"validateFields,omitempty"`
	ValidateNewSchemas  *bool     `json:"validateNewSchemas,omitempty"`
	ValidateRules       *bool     `json:"validateRules,omitempty"`
	Compatibility       *string   `json:"compatibility,omitempty"`
	CompatibilityPolicy *string   `json:"compatibilityPolicy,omitempty"`
	CompatibilityGroup  *string   `json:"compatibilityGroup,omitempty"`
	DefaultMetadata     *Metadata `json:"defaultMetadata,omitempty"`
	OverrideMetadata    *Metadata `json:"overrideMetadata,omitempty"`
	DefaultRuleSet      *RuleSet  `json:"defaultRuleSet,omitempty"`
	OverrideRuleSet     *RuleSet  `json:"overrideRuleSet,omitempty"`
}

func toConfigUpdateJSON(c *Config) configUpdateJSON {
	return configUpdateJSON{c.Alias, c.AliasForDeks, c.Normalize, c.ValidateFields, c.ValidateNewSchemas,
		c.ValidateRules, c.CompatibilityLevel, c.CompatibilityPolicy, c.CompatibilityGroup,
		c.DefaultMetadata, c.OverrideMetadata, c.DefaultRuleSet, c.OverrideRuleSet}
}

type modeJSON struct {
	Mode string `json:"mode,omitempty"`
}

type compatibilityJSON struct {
	IsCompatible bool     `json:"is_compatible"`
	Messages     []string `json:"messages,omitempty"`
}

// verboseCompatibilityJSON keeps "messages":[] when verbose finds none, as
// Confluent's NON_NULL does.
type verboseCompatibilityJSON struct {
	IsCompatible bool     `json:"is_compatible"`
	Messages     []string `json:"messages"`
}
