package config

// KeyInfo describes one configuration key of the table, for tools and docs
// that want the facts rather than the rendered reference.
type KeyInfo struct {
	Name        string
	Type        Type
	Default     string // Kafka's string form; for topic keys, Kafka's LogConfig default
	Null        bool   // the default is null
	ValidValues string // "" when any value of the type is valid
	Doc         string
	Dynamic     bool     // broker keys: alterable through AlterConfigs
	Implemented bool     // sharq acts on it; false: accepted with a warning
	SharqOnly   bool     // not a Kafka key
	Deviation   string   // why sharq's default differs from Kafka's
	Synonyms    []string // topic keys: the broker keys that supply the default
}

// BrokerKeys lists every broker key, sorted by name.
func BrokerKeys() []KeyInfo {
	out := make([]KeyInfo, len(brokerKeys))
	for i, k := range brokerKeys {
		out[i] = KeyInfo{Name: k.name, Type: k.typ, Default: k.def, Null: k.null, Doc: k.doc,
			Dynamic: k.dynamic, Implemented: k.impl, SharqOnly: k.sharq, Deviation: k.deviate}
		if k.valid != nil {
			out[i].ValidValues = k.valid.String()
		}
	}
	return out
}

// TopicKeys lists every topic key, sorted by name.
func TopicKeys() []KeyInfo {
	out := make([]KeyInfo, len(topicKeys))
	for i, k := range topicKeys {
		out[i] = KeyInfo{Name: k.name, Type: k.typ, Default: k.def, Doc: k.doc, Dynamic: true,
			Implemented: k.impl, Synonyms: append([]string(nil), k.synonyms...)}
		if k.valid != nil {
			out[i].ValidValues = k.valid.String()
		}
	}
	return out
}
