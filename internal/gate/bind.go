package gate

import (
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/devctl/devctl/internal/suggest"
)

// FieldError is a requirement whose path or value does not fit the
// report's type: a misspelt field, a filter on something that is not a
// list, a number compared with a word. Pos points into Source.
type FieldError = SyntaxError

// Bind checks r against the Go type of the report (a struct whose json
// tags name the fields) and resolves the one shorthand: a first name that
// is not a field of the report but is a field of its "summary" is read
// from the summary, so `gpu_count>=8` means `summary.gpu_count>=8`.
func (r *Requirement) Bind(root reflect.Type) error {
	t := deref(root)
	if len(r.Path) > 0 && t.Kind() == reflect.Struct {
		if _, ok := field(t, r.Path[0].Name); !ok {
			if st, ok := field(t, "summary"); ok {
				if _, ok := field(deref(st), r.Path[0].Name); ok {
					r.Path = append([]Segment{{Name: "summary", Pos: r.Path[0].Pos}}, r.Path...)
				} else {
					return r.errAt(r.Path[0].Pos, "%s; want a field of the report (%s) or of its summary (%s)",
						unknownField(r.Path[0].Name, append(fieldNames(deref(st)), fieldNames(t)...)), strings.Join(fieldNames(t), ", "), strings.Join(fieldNames(deref(st)), ", "))
				}
			}
		}
	}
	for _, seg := range r.Path {
		next, err := r.step(t, seg)
		if err != nil {
			return err
		}
		t = next
	}
	return r.checkValue(t)
}

// step resolves one segment against t and returns the type it leads to
// (the element type for a list).
func (r *Requirement) step(t reflect.Type, seg Segment) (reflect.Type, error) {
	t = deref(t)
	if t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
		t = deref(t.Elem()) // a path through a list reads every element
	}
	switch t.Kind() {
	case reflect.Interface:
		return t, nil // free-form data (extra maps): anything may be there
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return nil, r.errAt(seg.Pos, "%s cannot be read: not an object", seg.Name)
		}
		t = t.Elem()
	case reflect.Struct:
		ft, ok := field(t, seg.Name)
		if !ok {
			return nil, r.errAt(seg.Pos, "%s; want one of %s", unknownField(seg.Name, fieldNames(t)), strings.Join(fieldNames(t), ", "))
		}
		t = ft
	default:
		return nil, r.errAt(seg.Pos, "cannot read %q: the value before it is a %s, not an object", seg.Name, kindName(t))
	}
	if len(seg.Filters) == 0 {
		return t, nil
	}
	lt := deref(t)
	if lt.Kind() == reflect.Interface {
		return lt, nil
	}
	if lt.Kind() != reflect.Slice && lt.Kind() != reflect.Array {
		return nil, r.errAt(seg.Pos, "%s is a %s, not a list; [...] filters list elements", seg.Name, kindName(lt))
	}
	et := deref(lt.Elem())
	for _, f := range seg.Filters {
		if et.Kind() != reflect.Struct {
			continue
		}
		if _, ok := field(et, f.Field); !ok {
			return nil, r.errAt(f.Pos, "%s in the filter; want one of %s", unknownField(f.Field, fieldNames(et)), strings.Join(fieldNames(et), ", "))
		}
	}
	return lt, nil
}

// unknownField names a field that is not there and, for a typo, the one
// most likely meant: `unknown field "gpu_cont" (did you mean "gpu_count"?)`.
func unknownField(name string, names []string) string {
	msg := fmt.Sprintf("unknown field %q", name)
	if s := suggest.Closest(name, names); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	return msg
}

// checkValue checks the literal against the type the path ends at.
func (r *Requirement) checkValue(t reflect.Type) error {
	t = deref(t)
	if t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
		if r.Op != OpTruthy {
			return r.errAt(r.ValuePos, "%s is a list; a list can only be required to be non-empty (no operator), or filtered with [field=value]", r.pathString())
		}
		return nil
	}
	switch t.Kind() {
	case reflect.Bool:
		if r.Op.ordered() {
			return r.errAt(r.ValuePos, "%s is true or false; compare it with == or != (or give it alone for true)", r.pathString())
		}
		if r.Op != OpTruthy {
			if _, err := strconv.ParseBool(r.Value); err != nil {
				return r.errAt(r.ValuePos, "invalid value %q for %s: want true or false", r.Value, r.pathString())
			}
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		if r.Op != OpTruthy {
			if _, err := parseNumber(r.Value); err != nil {
				return r.errAt(r.ValuePos, "invalid value %q for %s: %v", r.Value, r.pathString(), err)
			}
		}
	case reflect.String:
		if r.Op.ordered() {
			if _, ok := parseVersion(r.Value, true); !ok {
				return r.errAt(r.ValuePos, "invalid value %q for %s: %s compares strings as versions; want a version such as 12.1", r.Value, r.pathString(), r.Op)
			}
		}
	case reflect.Struct, reflect.Map:
		if r.Op != OpTruthy {
			return r.errAt(r.ValuePos, "%s is an object; name one of its fields (%s.FIELD)", r.pathString(), r.pathString())
		}
	}
	return nil
}

func (r *Requirement) errAt(pos int, format string, args ...any) error {
	return &SyntaxError{Source: r.Source, Pos: pos, Msg: fmt.Sprintf(format, args...)}
}

func (r *Requirement) pathString() string {
	names := make([]string, len(r.Path))
	for i, s := range r.Path {
		names[i] = s.Name
	}
	return strings.Join(names, ".")
}

func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// field finds the struct field whose json name is name (embedded structs
// included).
func field(t reflect.Type, name string) (reflect.Type, bool) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if tag == "-" {
			continue
		}
		if f.Anonymous && tag == "" {
			if ft, ok := field(deref(f.Type), name); ok {
				return ft, true
			}
			continue
		}
		if tag == "" {
			tag = f.Name
		}
		if tag == name {
			return f.Type, true
		}
	}
	return nil, false
}

func fieldNames(t reflect.Type) []string {
	var names []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case tag == "-":
		case f.Anonymous && tag == "":
			names = append(names, fieldNames(deref(f.Type))...)
		case tag == "":
			names = append(names, f.Name)
		default:
			names = append(names, tag)
		}
	}
	sort.Strings(names)
	return names
}

func kindName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Bool:
		return "boolean"
	case reflect.String:
		return "string"
	case reflect.Slice, reflect.Array:
		return "list"
	case reflect.Struct, reflect.Map:
		return "object"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return "number"
	}
	return t.Kind().String()
}
