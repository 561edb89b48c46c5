package output

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"

	"github.com/devctl/devctl/internal/safetext"
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

// A GPU name with U+202E (issue 22), a log line with OSC 52 and a C1 CSI:
// JSON and YAML keep them decodable but never raw.
func TestExportNeverWritesARawControlOrBidiRune(t *testing.T) {
	for _, s := range []string{"NVIDIA A100\u202E08-MXS", "\x1b]52;c;ZWNobyBoaQ==\x07", "\u009b31m", "a\u2066b\u2069", "del\x7f"} {
		checkExport(t, s)
	}
}

func checkExport(t *testing.T, s string) {
	t.Helper()
	v := map[string]any{"name": s, "list": []string{s}}
	for _, f := range []Format{JSON, YAML} {
		var b bytes.Buffer
		if _, err := Export(&b, f, v); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, r := range b.String() {
			if r != '\n' && safetext.Unsafe(r) {
				t.Fatalf("%s output %q keeps %U raw", f, b.String(), r)
			}
		}
		var back map[string]any
		var err error
		if f == JSON {
			err = json.Unmarshal(b.Bytes(), &back)
		} else {
			err = yaml.Unmarshal(b.Bytes(), &back)
		}
		want := string([]rune(s))
		if err != nil || back["name"] != want || back["list"].([]any)[0] != want {
			t.Fatalf("%s output %q decodes to %q, %v; want %q", f, b.String(), back, err, want)
		}
	}
}

func FuzzExportStrings(f *testing.F) {
	f.Add("NVIDIA A100\u202E08-MXS")
	f.Add("\x1b[2J")
	f.Add("key: value\n- item")
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return // YAML re-reads invalid UTF-8 differently from JSON; both replace it
		}
		checkExport(t, s)
	})
}
