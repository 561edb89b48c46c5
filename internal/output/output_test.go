package output

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

func TestSpecParse(t *testing.T) {
	spec := Spec{Table, JSON, YAML}
	tests := []struct {
		name, value string
		want        Format
		wantErr     string
	}{
		{name: "an empty value gives the default, the first format", value: "", want: Table},
		{name: "a value is matched without regard to case or spaces", value: " JSON ", want: JSON},
		{name: "an unknown value lists the formats offered", value: "xml", wantErr: `unknown output format "xml" for -o: want one of table, json, yaml`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := spec.Parse(tc.value)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr || !errors.Is(err, ErrUnknownFormat) {
					t.Fatalf("Parse(%q) error = %v, want %q", tc.value, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("Parse(%q) = %q, %v; want %q", tc.value, got, err, tc.want)
			}
		})
	}
}

func TestSpecRegisterNamesTheFormats(t *testing.T) {
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	var v string
	Spec{Table, JSON, Env}.Register(fs, &v, "table is plain when piped")
	if got, want := fs.Lookup("output").Usage, "output format: table, json or env (table is plain when piped)"; got != want {
		t.Errorf("usage = %q, want %q", got, want)
	}
}

func TestExport(t *testing.T) {
	data := map[string]string{"a": "<b>"}
	var buf bytes.Buffer
	if ok, err := Export(&buf, JSON, data); !ok || err != nil || buf.String() != "{\n  \"a\": \"<b>\"\n}\n" {
		t.Errorf("JSON export = %v, %v, %q", ok, err, buf.String())
	}
	buf.Reset()
	if ok, err := Export(&buf, YAML, data); !ok || err != nil || buf.String() != "a: <b>\n" {
		t.Errorf("YAML export = %v, %v, %q", ok, err, buf.String())
	}
	buf.Reset()
	if ok, _ := Export(&buf, Table, data); ok || buf.Len() != 0 {
		t.Errorf("a table is left to the command")
	}
}

func TestAnEmptyDashOIsRefusedNotTheDefault(t *testing.T) {
	var v string
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	Spec{Table, JSON}.Register(fs, &v, "")
	err := fs.Parse([]string{"-o", ""})
	if err == nil || !errors.Is(err, ErrUnknownFormat) && !strings.Contains(err.Error(), "want one of table, json") {
		t.Fatalf("-o '': err = %v", err)
	}
	if err := fs.Parse([]string{"-o", "json"}); err != nil || v != "json" {
		t.Fatalf("-o json: %q, %v", v, err)
	}
}
