package jsonschema

import (
	"encoding/json"
	"fmt"
	"regexp"

	sjs "github.com/santhosh-tekuri/jsonschema/v6"

	"sharq/schema/internal/jsontree"
)

var sDrafts = map[draft]*sjs.Draft{draft4: sjs.Draft4, draft6: sjs.Draft6, draft7: sjs.Draft7, draft2019: sjs.Draft2019, draft2020: sjs.Draft2020}

// document is a schema text parsed, with the URL it is known by.
type document struct {
	url string
	doc *jsontree.Value
}

// noLoader refuses every URL not given as a resource: a schema registry
// must not read local files or reach the network for a $ref.
type noLoader struct{}

func (noLoader) Load(u string) (any, error) {
	return nil, fmt.Errorf("%s is not a referenced schema", u)
}

// anyRegexp is the pattern engine for the validator: Go's regexp where it
// compiles the pattern, otherwise a stand-in that matches nothing, as the
// patterns are Java's (and ECMA 262's) dialect, wider than RE2's, and the
// registry only needs to know the schema is well formed.
type anyRegexp struct {
	re  *regexp.Regexp
	src string
}

func (r anyRegexp) MatchString(s string) bool { return r.re != nil && r.re.MatchString(s) }
func (r anyRegexp) String() string            { return r.src }

func lenientRegexp(s string) (sjs.Regexp, error) {
	re, _ := regexp.Compile(s)
	return anyRegexp{re, s}, nil
}

// validate checks the root and its references against their draft's
// meta-schema and that every $ref resolves, with santhosh-tekuri's
// compiler: everit's and json-sKema's loaders reject what it rejects.
func validate(d draft, docs []document) error {
	c := sjs.NewCompiler()
	c.DefaultDraft(sDrafts[d])
	c.UseLoader(noLoader{})
	c.UseRegexpEngine(lenientRegexp)
	seen := make(map[string]bool)
	for _, doc := range docs {
		if seen[doc.url] {
			continue
		}
		seen[doc.url] = true
		if err := c.AddResource(doc.url, toAny(mergeDefs(doc.doc))); err != nil {
			return err
		}
	}
	_, err := c.Compile(docs[0].url)
	return err
}

// mergeDefs is Confluent's mergeDefBuckets: top-level definitions copied
// into $defs (a $defs entry of the same name wins), so "#/$defs/X" finds
// a definition written under either keyword.
func mergeDefs(v *jsontree.Value) *jsontree.Value {
	defs := v.Get("definitions")
	if defs == nil || defs.Kind != jsontree.Object || len(defs.Members) == 0 {
		return v
	}
	target := v.Get("$defs")
	if target != nil && target.Kind != jsontree.Object {
		return v
	}
	merged := &jsontree.Value{Kind: jsontree.Object}
	if target != nil {
		merged.Members = append(merged.Members, target.Members...)
	}
	for _, m := range defs.Members {
		if merged.Get(m.Key) == nil {
			merged.Members = append(merged.Members, m)
		}
	}
	out := &jsontree.Value{Kind: jsontree.Object, Members: make([]jsontree.Member, 0, len(v.Members)+1)}
	replaced := false
	for _, m := range v.Members {
		if m.Key == "$defs" {
			m.Value, replaced = merged, true
		}
		out.Members = append(out.Members, m)
	}
	if !replaced {
		out.Members = append(out.Members, jsontree.Member{Key: "$defs", Value: merged})
	}
	return out
}

// toAny converts to the values santhosh-tekuri's compiler reads
// (encoding/json's, numbers as json.Number).
func toAny(v *jsontree.Value) any {
	switch v.Kind {
	case jsontree.Null:
		return nil
	case jsontree.Bool:
		return v.Bool
	case jsontree.Number:
		return json.Number(v.Str)
	case jsontree.String:
		return v.Str
	case jsontree.Array:
		out := make([]any, len(v.Items))
		for i, it := range v.Items {
			out[i] = toAny(it)
		}
		return out
	}
	out := make(map[string]any, len(v.Members))
	for _, m := range v.Members {
		out[m.Key] = toAny(m.Value)
	}
	return out
}
