package schema

import "strings"

// StoredParser is implemented by formats that check a schema being
// registered more strictly than one already stored (Confluent's
// validateAsNew). The registry parses what it reads back from _schemas,
// and the previous versions it checks against, with ParseStored, so a
// schema an older registry accepted still loads; Parse is for new
// registrations. A format without it parses both the same way.
type StoredParser interface {
	ParseStored(text string, refs []ResolvedReference) (Parsed, error)
}

// ParseStored parses with f's lenient parser when it has one.
func ParseStored(f Format, text string, refs []ResolvedReference) (Parsed, error) {
	if sp, ok := f.(StoredParser); ok {
		return sp.ParseStored(text, refs)
	}
	return f.Parse(text, refs)
}

// FillRoles completes a BackwardCompatible message: as in Confluent's,
// each message names the two schemas' roles with "%s", the reader's
// first, which the registry fills as Confluent's SchemaValidatorBuilder
// does: ("new", "old") for a backward check, ("old", "new") for a forward
// one. "%%" is a literal '%'.
func FillRoles(msg, reader, writer string) string {
	if !strings.Contains(msg, "%") {
		return msg
	}
	var sb strings.Builder
	roles := [2]string{reader, writer}
	n := 0
	for i := 0; i < len(msg); i++ {
		if msg[i] == '%' && i+1 < len(msg) {
			switch msg[i+1] {
			case 's':
				if n < len(roles) {
					sb.WriteString(roles[n])
				}
				n++
				i++
				continue
			case '%':
				sb.WriteByte('%')
				i++
				continue
			}
		}
		sb.WriteByte(msg[i])
	}
	return sb.String()
}
