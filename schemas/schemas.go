// Package schemas embeds the JSON Schemas (2020-12) of every JSON document
// devctl prints or writes, so `devctl schema NAME` prints the one the binary
// was built with. The rules for changing them are in docs/schemas.md.
package schemas

import (
	"embed"
	"fmt"
	"sort"
	"strings"
)

//go:embed *.schema.json
var files embed.FS

const suffix = ".schema.json"

// Names lists the schemas, sorted.
func Names() []string {
	ents, _ := files.ReadDir(".")
	var names []string
	for _, e := range ents {
		names = append(names, strings.TrimSuffix(e.Name(), suffix))
	}
	sort.Strings(names)
	return names
}

// Get returns the schema called name ("probe", "doctor", ...).
func Get(name string) ([]byte, error) {
	for _, n := range Names() {
		if n == name {
			return files.ReadFile(n + suffix)
		}
	}
	return nil, fmt.Errorf("unknown schema %q: want one of %s", name, strings.Join(Names(), ", "))
}

// ID is the $id every schema declares, for validators that resolve
// references by URL.
func ID(name string) string {
	return "https://github.com/devctl/devctl/schemas/" + name + suffix
}
