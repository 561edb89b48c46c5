// Package schemagen writes the JSON Schemas in schemas/ from the Go types
// devctl encodes, plus the facts a type cannot say (enums, constants,
// descriptions) kept here as overrides. The schemas test compares its
// output with the committed files (`make schemas` rewrites them) and
// validates real outputs against them, so a type change and its schema
// land together and a new enum value is caught on real data.
package schemagen

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/devctl/devctl/internal/backend"
	"github.com/devctl/devctl/internal/bench"
	"github.com/devctl/devctl/internal/devmem"
	"github.com/devctl/devctl/internal/doctor"
	"github.com/devctl/devctl/internal/history"
	"github.com/devctl/devctl/internal/probe"
	"github.com/devctl/devctl/internal/recommend"
	"github.com/devctl/devctl/internal/selftest"
	"github.com/devctl/devctl/internal/snapshot"
	"github.com/devctl/devctl/internal/supervise"
)

// Doc describes one schema: the value whose type it describes, its title
// and description, and overrides keyed "Type.field" (or ".field" for the
// root) that replace the generated schema of that property.
type Doc struct {
	Name        string
	Root        any
	Title       string
	Description string
	Overrides   map[string]map[string]any
}

func enum(vals ...string) map[string]any {
	out := make([]any, len(vals))
	for i, v := range vals {
		out[i] = v
	}
	return map[string]any{"enum": out}
}

func backends() map[string]any {
	var names []string
	for _, b := range backend.All() {
		names = append(names, string(b))
	}
	return enum(names...)
}

// recordVersion is a history record's "v": absent in version 1 records.
var recordVersion = map[string]any{"type": "integer", "minimum": 2, "maximum": history.SchemaVersion, "description": "The record's format version; absent: version 1 (docs/run.md, Migration)."}

var schemaVersion = map[string]any{"const": 1, "description": "Incremented only on a breaking change (docs/schemas.md)."}

// Docs are the published schemas.
func Docs() []Doc {
	deviceType := enum("gpu", "tpu", "npu", "cpu")
	checkStatus := enum(string(doctor.Pass), string(doctor.Warn), string(doctor.Fail), string(doctor.Skip), string(doctor.Error), string(doctor.Timeout))
	return []Doc{
		{
			Name: "probe", Root: probe.Report{}, Title: "devctl probe -o json",
			Description: "The capability report: the machine's compute devices and what each can do. Field reference: docs/report.md.",
			Overrides: map[string]map[string]any{
				".schema_version":     schemaVersion,
				"Summary.backend":     backends(),
				"Device.backend":      backends(),
				"Summary.device_type": deviceType,
				"Device.device_type":  deviceType,
				"DriverStatus.status": enum(probe.StatusOK, probe.StatusAbsent, probe.StatusError, probe.StatusTimeout, probe.StatusDegraded),
				"Device.extra":        {"type": "object", "description": "Family-specific facts; free-form by design."},
			},
		},
		{
			Name: "recommend", Root: recommend.Result{}, Title: "devctl recommend -o json",
			Description: "A framework configuration for a model on a device: memory strategy, precision, plan, environment, reasons. Field reference: docs/recommend.md.",
		},
		{
			Name: "doctor", Root: doctor.Report{}, Title: "devctl doctor -o json",
			Description: "Check results and, with --log, the explanation of a failed run. Field reference: docs/doctor.md.",
			Overrides: map[string]map[string]any{
				".schema_version":   schemaVersion,
				".lang":             enum(string(doctor.English), string(doctor.Polish)),
				".summary":          {"type": "object", "propertyNames": checkStatus, "additionalProperties": map[string]any{"type": "integer", "minimum": 0}},
				"Result.status":     checkStatus,
				"Outcome.status":    checkStatus,
				"Framework.status":  checkStatus,
				"Op.status":         enum(string(selftest.OpOK), string(selftest.OpFailed), string(selftest.OpUnfinished)),
				"Op.name":           enum(selftest.Operations...),
				"Framework.name":    enum(selftest.Frameworks...),
				"Device.backend":    backends(),
				"Isolation.network": enum(selftest.NetworkNamespace, selftest.NetworkEnvironment),
			},
		},
		{
			Name: "bench", Root: bench.Run{}, Title: "devctl bench -o json",
			Description: "One benchmark run: measured figures against theoretical peaks. Field reference: docs/bench.md.",
			Overrides: map[string]map[string]any{
				".schema_version": schemaVersion,
				"Result.source":   enum(bench.SourceMeasured, bench.SourceComputed),
			},
		},
		{
			Name: "snapshot-manifest", Root: snapshot.Manifest{}, Title: "manifest.json of a devctl snapshot",
			Description: "The index of a snapshot archive (devctl snapshot): what was recorded and what was withheld. Field reference: docs/snapshot.md.",
			Overrides: map[string]map[string]any{
				".format": {"const": snapshot.FormatVersion, "description": "The archive layout version."},
			},
		},
		{
			Name: "run-report", Root: supervise.Report{}, Title: "devctl run --report FILE",
			Description: "The attempts of one supervised run and how it ended. Field reference: docs/run.md.",
			Overrides: map[string]map[string]any{
				".outcome":           enum(history.Success, history.Failure, history.Unrelated, history.Interrupted),
				"Attempt.outcome":    enum(history.Success, history.Failure, history.Unrelated, history.Interrupted),
				"Measurement.method": enum(devmem.MethodNVML, devmem.MethodSMI, devmem.MethodDRMFdinfo),
			},
		},
		{
			Name: "history-report", Root: history.Report{}, Title: "devctl history -o json",
			Description: "This machine's run record per device, the history rule's verdicts per device and operation, the measured attempts, and the records. Field reference: docs/run.md.",
			Overrides: map[string]map[string]any{
				".schema_version":    {"const": history.ReportVersion, "description": "2: attempts, device and operation faults, operations, measured runs, this machine."},
				"Record.outcome":     enum(history.Success, history.Failure, history.Unrelated, history.Interrupted),
				"Record.source":      enum(history.SourceRun, history.SourceDoctor, history.SourceSelfTest),
				"Record.v":           recordVersion,
				"Verdict.scope":      enum(history.ScopeDevice.String(), history.ScopeOperation.String()),
				"Measurement.method": enum(devmem.MethodNVML, devmem.MethodSMI, devmem.MethodDRMFdinfo),
			},
		},
		{
			Name: "history", Root: history.Record{}, Title: "one line of history.jsonl",
			Description: "One per-device run record in $XDG_STATE_HOME/devctl/history.jsonl.",
			Overrides: map[string]map[string]any{
				".outcome":           enum(history.Success, history.Failure, history.Unrelated, history.Interrupted),
				".source":            enum(history.SourceRun, history.SourceDoctor, history.SourceSelfTest),
				".v":                 recordVersion,
				".machine":           {"type": "string", "pattern": "^[0-9a-f]{16}$", "description": "This machine's id: HMAC-SHA256 keyed by /etc/machine-id (or the D-Bus or DMI id) over a fixed devctl string, 16 hex digits; never the raw id. Absent in version 1 records and where no id is readable."},
				"Measurement.method": enum(devmem.MethodNVML, devmem.MethodSMI, devmem.MethodDRMFdinfo),
			},
		},
	}
}

// Generate returns every schema as indented JSON, by name. existing
// holds the committed schemas (nil entries for new ones): the types decide
// the structure, but annotations written into the files by hand
// (descriptions, enums, bounds, formats) are kept wherever the property
// still exists.
func Generate(existing func(name string) []byte) (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, d := range Docs() {
		b, err := d.Generate(existing(d.Name))
		if err != nil {
			return nil, err
		}
		out[d.Name] = b
	}
	return out, nil
}

// structural keys come from the Go types; every other key of a committed
// schema object is an annotation a person wrote, and is kept.
var structural = map[string]bool{
	"type": true, "properties": true, "required": true, "additionalProperties": true,
	"items": true, "$ref": true, "anyOf": true, "$defs": true, "$schema": true, "$id": true,
}

// keepAnnotations copies old's annotations into gen, recursively, where
// both describe the same place: every description and title, and the other
// keys (enum, const, minimum, format, ...) that the generator did not set.
func keepAnnotations(gen, old any) {
	g, ok1 := gen.(map[string]any)
	o, ok2 := old.(map[string]any)
	if !ok1 || !ok2 {
		return
	}
	for k, v := range o {
		_, set := g[k]
		if !structural[k] && (!set || k == "description" || k == "title") {
			g[k] = v // an enum or bound from the Go side wins; prose from the file does
		}
	}
	for _, k := range []string{"properties", "$defs"} {
		gm, ok1 := g[k].(map[string]any)
		om, ok2 := o[k].(map[string]any)
		if ok1 && ok2 {
			for name, v := range gm {
				keepAnnotations(v, om[name])
			}
		}
	}
	for _, k := range []string{"items", "additionalProperties"} {
		keepAnnotations(g[k], o[k])
	}
	ga, ok1 := g["anyOf"].([]any)
	oa, ok2 := o["anyOf"].([]any)
	if ok1 && ok2 && len(ga) == len(oa) {
		for i := range ga {
			keepAnnotations(ga[i], oa[i])
		}
	}
}

// ID is the $id of the schema called name.
func ID(name string) string {
	return "https://github.com/devctl/devctl/schemas/" + name + ".schema.json"
}

// Generate returns the schema of d, keeping the annotations of existing
// (the committed schema, or nil).
func (d Doc) Generate(existing []byte) ([]byte, error) {
	g := &gen{defs: map[string]any{}, overrides: d.Overrides, used: map[string]bool{}}
	t := reflect.TypeOf(d.Root)
	root := g.object(t, "")
	delete(g.defs, t.Name())
	for k := range d.Overrides {
		if !g.used[k] {
			return nil, fmt.Errorf("schema %s: override %q matches no field", d.Name, k)
		}
	}
	doc := map[string]any{
		"$schema":     "https://json-schema.org/draft/2020-12/schema",
		"$id":         ID(d.Name),
		"title":       d.Title,
		"description": d.Description,
	}
	for k, v := range root {
		doc[k] = v
	}
	if len(g.defs) > 0 {
		doc["$defs"] = g.defs
	}
	if len(existing) > 0 {
		// Round-trip through JSON so both sides are plain maps.
		raw, err := json.Marshal(doc)
		if err != nil {
			return nil, err
		}
		var fresh, old any
		if err := json.Unmarshal(raw, &fresh); err != nil {
			return nil, err
		}
		if err := json.Unmarshal(existing, &old); err != nil {
			return nil, fmt.Errorf("schema %s: the committed file is not JSON: %w", d.Name, err)
		}
		keepAnnotations(fresh, old)
		b, err := json.MarshalIndent(fresh, "", "  ")
		return append(b, '\n'), err
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

type gen struct {
	defs      map[string]any
	overrides map[string]map[string]any
	used      map[string]bool
}

var (
	timeType      = reflect.TypeOf(time.Time{})
	jsonMarshaler = reflect.TypeOf((*json.Marshaler)(nil)).Elem()
	textMarshaler = reflect.TypeOf((*encoding.TextMarshaler)(nil)).Elem()
)

func implements(t, iface reflect.Type) bool {
	return t.Implements(iface) || reflect.PointerTo(t).Implements(iface)
}

func (g *gen) schema(t reflect.Type, nullable bool) map[string]any {
	s := g.inner(t)
	if !nullable {
		return s
	}
	switch ty := s["type"].(type) {
	case string:
		s["type"] = []any{ty, "null"}
		return s
	}
	if len(s) == 0 {
		return s // anything, null included
	}
	return map[string]any{"anyOf": []any{s, map[string]any{"type": "null"}}}
}

func (g *gen) inner(t reflect.Type) map[string]any {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == timeType:
		return map[string]any{"type": "string", "format": "date-time"}
	case implements(t, jsonMarshaler):
		return map[string]any{} // its own encoding: described by an override
	case implements(t, textMarshaler):
		return map[string]any{"type": "string"}
	}
	switch t.Kind() {
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer"}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}
	case reflect.Interface:
		return map[string]any{}
	case reflect.Slice, reflect.Array:
		return map[string]any{"type": "array", "items": g.schema(t.Elem(), false)}
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": g.schema(t.Elem(), false)}
	case reflect.Struct:
		name := t.Name()
		if _, ok := g.defs[name]; !ok {
			g.defs[name] = nil // a placeholder stops recursion
			g.defs[name] = g.object(t, name)
		}
		return map[string]any{"$ref": "#/$defs/" + name}
	}
	return map[string]any{}
}

// object describes a struct: every json-tagged field; fields without
// omitempty are required, and such pointers, slices and maps may be null.
func (g *gen) object(t reflect.Type, name string) map[string]any {
	props := map[string]any{}
	var required []string
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			tag, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			if tag == "-" {
				continue
			}
			if f.Anonymous && tag == "" {
				ft := f.Type
				for ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				walk(ft)
				continue
			}
			if tag == "" {
				tag = f.Name
			}
			omit := strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero")
			k := f.Type.Kind()
			nullable := !omit && (k == reflect.Pointer || k == reflect.Slice || k == reflect.Map)
			key := name + "." + tag
			if o, ok := g.overrides[key]; ok {
				g.used[key] = true
				s := map[string]any{}
				for k, v := range o {
					s[k] = v
				}
				if nullable {
					s = map[string]any{"anyOf": []any{s, map[string]any{"type": "null"}}}
				}
				props[tag] = s
			} else {
				props[tag] = g.schema(f.Type, nullable)
			}
			if !omit {
				required = append(required, tag)
			}
		}
	}
	walk(t)
	o := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		sort.Strings(required)
		o["required"] = required
	}
	return o
}
