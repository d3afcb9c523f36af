package config

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

const usage = `Usage: sharq [flags] [server.properties]

A Kafka-compatible broker. With no arguments it serves PLAINTEXT://localhost:9092
with data under ./sharq-data, one node that is both broker and controller.

Flags:
  --config FILE          YAML file (flat dotted keys) or a Kafka server.properties
  --override key=value   set a key; repeatable; wins over file and environment
  --check-config         validate the configuration and exit
  -h, --help             this text

Every key can also be set with an environment variable SHARQ_<KEY>, dots as
underscores, upper case (log.dirs -> SHARQ_LOG_DIRS).
Precedence: defaults < file < environment < --override.

`

// WriteHelp writes the --help text: usage, then every key with its default.
func WriteHelp(w io.Writer) error {
	bw := bufio.NewWriter(w)
	bw.WriteString(usage)
	if err := writeText(bw); err != nil {
		return err
	}
	return bw.Flush()
}

// WriteReference writes the key reference in "text" (as --help lists it) or
// "markdown" (the tables of docs/configuration.md): broker keys, then topic keys.
func WriteReference(w io.Writer, format string) error {
	bw := bufio.NewWriter(w)
	var err error
	switch format {
	case "text", "":
		err = writeText(bw)
	case "markdown", "md":
		err = writeMarkdown(bw)
	default:
		return fmt.Errorf("reference format %q: want text or markdown", format)
	}
	if err != nil {
		return err
	}
	return bw.Flush()
}

func displayDefault(def string, null bool) string {
	if null {
		return "null"
	}
	if def == "" {
		return `""`
	}
	return def
}

func brokerNotes(k *keyDef) []string {
	var notes []string
	if k.valid != nil && k.valid.String() != "" {
		notes = append(notes, "valid: "+k.valid.String())
	}
	if k.dynamic {
		notes = append(notes, "dynamic")
	}
	if !k.impl {
		notes = append(notes, "accepted, no effect in sharq")
	}
	if k.sharq {
		notes = append(notes, "sharq only")
	}
	if k.deviate != "" {
		notes = append(notes, "sharq default: "+k.deviate)
	}
	return notes
}

func writeText(w *bufio.Writer) error {
	w.WriteString("Broker configuration keys (default in brackets):\n\n")
	for _, k := range brokerKeys {
		fmt.Fprintf(w, "  %s (%s) [%s]\n", k.name, k.typ, displayDefault(k.def, k.null))
		fmt.Fprintf(w, "      %s\n", k.doc)
		if n := brokerNotes(k); len(n) > 0 {
			fmt.Fprintf(w, "      (%s)\n", strings.Join(n, "; "))
		}
	}
	w.WriteString("\nTopic configuration keys (CreateTopics / AlterConfigs; default = broker key):\n\n")
	for _, k := range topicKeys {
		def := k.def
		if len(k.synonyms) > 0 {
			def = k.synonyms[0]
		}
		fmt.Fprintf(w, "  %s (%s) [%s]\n", k.name, k.typ, displayDefault(def, false))
		fmt.Fprintf(w, "      %s\n", k.doc)
		if k.valid != nil && k.valid.String() != "" {
			fmt.Fprintf(w, "      (valid: %s)\n", k.valid.String())
		}
	}
	w.WriteString("\nGroup configuration keys (kafka-configs --entity-type groups; default = broker key):\n\n")
	for _, k := range groupKeys {
		def := k.def
		if k.broker != "" {
			def = k.broker
		}
		fmt.Fprintf(w, "  %s (%s) [%s]\n", k.name, k.typ, displayDefault(def, false))
		fmt.Fprintf(w, "      %s\n", k.doc)
	}
	return nil
}

func mdCell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}

func writeMarkdown(w *bufio.Writer) error {
	w.WriteString("### Broker configuration\n\n")
	w.WriteString("| Key | Type | Default | Valid values | Dynamic | sharq | Description |\n")
	w.WriteString("|---|---|---|---|---|---|---|\n")
	for _, k := range brokerKeys {
		valid := ""
		if k.valid != nil {
			valid = k.valid.String()
		}
		dyn := ""
		if k.dynamic {
			dyn = "yes"
		}
		status := "yes"
		switch {
		case !k.impl:
			status = "ignored"
		case k.sharq:
			status = "sharq only"
		}
		doc := k.doc
		if k.deviate != "" {
			doc += " (" + k.deviate + ")"
		}
		fmt.Fprintf(w, "| `%s` | %s | `%s` | %s | %s | %s | %s |\n",
			k.name, k.typ, mdCell(displayDefault(k.def, k.null)), mdCell(valid), dyn, status, mdCell(doc))
	}
	w.WriteString("\n### Topic configuration\n\n")
	w.WriteString("| Key | Type | Kafka default | Broker key | Valid values | sharq | Description |\n")
	w.WriteString("|---|---|---|---|---|---|---|\n")
	for _, k := range topicKeys {
		valid := ""
		if k.valid != nil {
			valid = k.valid.String()
		}
		status := "ignored"
		if k.impl {
			status = "yes"
		}
		syn := ""
		if len(k.synonyms) > 0 {
			syn = "`" + strings.Join(k.synonyms, "`, `") + "`"
		}
		fmt.Fprintf(w, "| `%s` | %s | `%s` | %s | %s | %s | %s |\n",
			k.name, k.typ, mdCell(displayDefault(k.def, false)), syn, mdCell(valid), status, mdCell(k.doc))
	}
	w.WriteString("\n### Group configuration\n\n")
	w.WriteString("Set per group with `kafka-configs --entity-type groups --entity-name <group> --alter --add-config`.\n\n")
	w.WriteString("| Key | Type | Default | Broker key | Valid values | sharq | Description |\n")
	w.WriteString("|---|---|---|---|---|---|---|\n")
	for _, k := range groupKeys {
		valid := ""
		if k.valid != nil {
			valid = k.valid.String()
		}
		switch {
		case k.minKey != "" && k.maxKey != "":
			valid = "[`" + k.minKey + "`,...,`" + k.maxKey + "`]"
		case k.minKey != "":
			valid = "[`" + k.minKey + "`,...]"
		case k.maxKey != "":
			valid = "[0,...,`" + k.maxKey + "`]"
		}
		def, broker := k.def, ""
		if k.broker != "" {
			def, broker = "", "`"+k.broker+"`"
		}
		if def != "" {
			def = "`" + def + "`"
		}
		status := "yes"
		switch {
		case strings.HasPrefix(k.name, "sharq."):
			status = "sharq only"
		case k.unused != "":
			status = "ignored (" + k.unused + ")"
		}
		fmt.Fprintf(w, "| `%s` | %s | %s | %s | %s | %s | %s |\n", k.name, k.typ, mdCell(def), broker, mdCell(valid), status, mdCell(k.doc))
	}
	return nil
}
