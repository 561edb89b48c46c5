// Package report renders devctl's results. Commands compute plain structs;
// this package alone turns them into tables, JSON, YAML or shell exports.
package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"go.yaml.in/yaml/v3"
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

// ParseFormat validates -o against what a command offers. An empty value
// gives def, the command's default (table on a terminal).
func ParseFormat(value string, def Format, allowed ...Format) (Format, error) {
	if value == "" {
		return def, nil
	}
	v := Format(strings.ToLower(strings.TrimSpace(value)))
	for _, a := range allowed {
		if v == a {
			return v, nil
		}
	}
	names := make([]string, len(allowed))
	for i, a := range allowed {
		names[i] = string(a)
	}
	return "", fmt.Errorf("%w %q for -o: want one of %s", ErrUnknownFormat, value, strings.Join(names, ", "))
}

// WriteJSON writes v as indented JSON with a trailing newline.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// WriteYAML writes v as YAML, with the same field names as the JSON.
func WriteYAML(w io.Writer, v any) error {
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return err
	}
	return enc.Close()
}
