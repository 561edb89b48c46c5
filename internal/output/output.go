// Package output is devctl's one exporter: every command's -o flag is an
// output.Spec (the formats it offers, parsed the same way, refused the same
// way), and JSON and YAML are written only here, so every command's
// machine-readable output has the same indentation, escaping and field
// names. Tables and shell exports are rendered beside the feature they
// show; this package imports no feature (gh: cmdutil/json_flags.go,
// kubectl: PrintFlags).
package output

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"

	"github.com/devctl/devctl/internal/safetext"
)

// ErrUnknownFormat marks an -o value the command does not offer (exit 2).
var ErrUnknownFormat = errors.New("unknown output format")

// Format is an output format name.
type Format string

// The formats devctl's commands offer.
const (
	Table Format = "table"
	JSON  Format = "json"
	YAML  Format = "yaml"
	Env   Format = "env"
)

// Spec is the formats one command offers on -o, the default first.
type Spec []Format

// Register adds -o/--output to fs, bound to value. The help lists the
// formats; note, when set, is added in parentheses.
func (s Spec) Register(fs *pflag.FlagSet, value *string, note string) {
	usage := "output format: " + s.list(" or ")
	if note != "" {
		usage += " (" + note + ")"
	}
	fs.VarP(&formatFlag{value: value, spec: s}, "output", "o", usage)
	names := make([]string, len(s))
	for i, f := range s {
		names[i] = string(f)
	}
	_ = fs.SetAnnotation("output", FormatsAnnotation, names)
}

// FormatsAnnotation lists, on an -o flag, the formats it offers (shell
// completion reads it).
const FormatsAnnotation = "devctl/formats"

// formatFlag is -o as a string flag that refuses an empty value (-o with
// an unset shell variable, say): it must not quietly mean the default.
type formatFlag struct {
	value *string
	spec  Spec
}

func (f *formatFlag) String() string {
	if f.value == nil {
		return ""
	}
	return *f.value
}

func (f *formatFlag) Set(v string) error {
	if strings.TrimSpace(v) == "" {
		return fmt.Errorf("%w \"\" for -o: want one of %s", ErrUnknownFormat, f.spec.list(", "))
	}
	*f.value = v
	return nil
}

func (f *formatFlag) Type() string { return "string" }

// Parse validates an -o value. Empty gives the default; an unknown value
// fails with a message that lists the formats offered.
func (s Spec) Parse(value string) (Format, error) {
	if value == "" {
		return s[0], nil
	}
	v := Format(strings.ToLower(strings.TrimSpace(value)))
	for _, a := range s {
		if v == a {
			return v, nil
		}
	}
	return "", fmt.Errorf("%w %q for -o: want one of %s", ErrUnknownFormat, value, s.list(", "))
}

// list names the formats: "table, json or yaml" (last joined by last).
func (s Spec) list(last string) string {
	names := make([]string, len(s))
	for i, f := range s {
		names[i] = string(f)
	}
	if last == ", " || len(names) < 2 {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:len(names)-1], ", ") + last + names[len(names)-1]
}

// Export writes data in a machine-readable format (JSON or YAML) and
// reports true; for any other format it writes nothing and reports false,
// and the command renders its table or exports itself.
func Export(w io.Writer, f Format, data any) (bool, error) {
	switch f {
	case JSON:
		return true, WriteJSON(w, data)
	case YAML:
		return true, WriteYAML(w, data)
	}
	return false, nil
}

// appender is a type with a generated JSON encoder (internal/jsonenc/gen):
// AppendJSON writes what encoding/json would, without the reflection that
// costs encoding/json a fraction of a millisecond the first time it meets
// a big type (the probe report).
type appender interface {
	AppendJSON(b []byte) ([]byte, error)
}

// WriteJSON writes v as indented JSON with a trailing newline, without
// HTML escaping (a "<" in a message stays a "<"), and with every rune
// that could act on a terminal (DEL, C1 controls, bidirectional overrides
// such as U+202E, which encoding/json leaves raw) written as a \uXXXX
// escape (safetext.EscapeJSON): the document decodes to exactly what
// devctl read, and `cat report.json` cannot reorder or recolour a screen.
func WriteJSON(w io.Writer, v any) error {
	b, err := MarshalJSON(v)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// MarshalJSON is WriteJSON into a byte slice.
func MarshalJSON(v any) ([]byte, error) {
	if a, ok := v.(appender); ok {
		if compact, err := a.AppendJSON(make([]byte, 0, 16<<10)); err == nil {
			var buf bytes.Buffer
			buf.Grow(2 * len(compact))
			if err := json.Indent(&buf, compact, "", "  "); err != nil {
				return nil, err
			}
			buf.WriteByte('\n')
			return safetext.EscapeJSON(buf.Bytes()), nil
		}
		// encoding/json reports the failure (a NaN, say) in its own words.
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return safetext.EscapeJSON(buf.Bytes()), nil
}

// WriteYAML writes v as YAML with exactly the JSON's field names and
// order: v is encoded to JSON first and that document re-emitted as block
// YAML, so a type with only json tags (most of devctl's) reads the same in
// both formats and the JSON Schemas describe the YAML too.
func WriteYAML(w io.Writer, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	// The YAML parser refuses DEL and C1 controls raw; escaped, as JSON
	// allows, they read back as the same runes.
	raw = safetext.EscapeJSON(raw)
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return err
	}
	blockStyle(&doc)
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return err
	}
	if err := enc.Close(); err != nil {
		return err
	}
	_, err = w.Write(safetext.EscapeQuoted(buf.Bytes()))
	return err
}

// blockStyle drops the flow and quoting styles the JSON parse left on
// every node; the encoder quotes only what YAML needs quoted ("12.4" stays
// a string). A scalar holding a rune that could act on a terminal is
// double-quoted, the one YAML style where safetext.EscapeQuoted's \uXXXX
// escapes read back as the rune.
func blockStyle(n *yaml.Node) {
	n.Style = 0
	if n.Kind == yaml.ScalarNode && safetext.Contains(n.Value) {
		n.Style = yaml.DoubleQuotedStyle
	}
	for _, c := range n.Content {
		blockStyle(c)
	}
}
