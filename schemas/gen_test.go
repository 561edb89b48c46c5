package schemas_test

import (
	"bytes"
	"flag"
	"os"
	"testing"

	"github.com/devctl/devctl/internal/schemagen"
	"github.com/devctl/devctl/schemas"
)

var update = flag.Bool("update", false, "rewrite schemas/*.schema.json from the Go types (make schemas)")

// TestSchemasUpToDate fails when a type devctl encodes changed without its
// schema: run `make schemas`, review the diff, and follow the
// schema_version rules in docs/schemas.md. Descriptions, enums and bounds
// written into the files by hand are kept by the generator.
func TestSchemasUpToDate(t *testing.T) {
	gen, err := schemagen.Generate(func(name string) []byte { b, _ := schemas.Get(name); return b })
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range gen {
		if *update {
			if err := os.WriteFile(name+".schema.json", want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := schemas.Get(name)
		if err != nil {
			t.Fatalf("%v (run make schemas)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("schemas/%s.schema.json is out of date with the Go types: run `make schemas` and review the diff", name)
		}
	}
	if len(gen) != len(schemas.Names()) {
		t.Errorf("schemas/ holds %d schemas, the generator %d", len(schemas.Names()), len(gen))
	}
}
