package gate

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
)

// Result is the verdict on one requirement. Reasons say, for an unmet
// requirement, what the report holds instead (one per failing element).
type Result struct {
	Requirement string   `json:"requirement" yaml:"requirement"`
	Met         bool     `json:"met" yaml:"met"`
	Reasons     []string `json:"reasons,omitempty" yaml:"reasons,omitempty"`
}

// item is a value reached by a path, with the label that names it in
// messages ("devices[cuda:1].pcie_link.width_current").
type item struct {
	label   string
	v       any
	present bool
}

// Eval decides r against doc, a report decoded from JSON into maps,
// slices, float64, string, bool and nil. A path through a filtered list
// must hold for every selected element and fails when none is selected; a
// path through a list without a filter must hold for every element. A
// value that is null or absent never meets a requirement.
func (r *Requirement) Eval(doc any) Result {
	res := Result{Requirement: r.Source}
	path := r.Path
	if m, ok := doc.(map[string]any); ok && len(path) > 0 && path[0].Name != "summary" {
		if _, top := m[path[0].Name]; !top {
			if s, ok := m["summary"].(map[string]any); ok {
				if _, in := s[path[0].Name]; in {
					path = append([]Segment{{Name: "summary"}}, path...)
				}
			}
		}
	}
	items := []item{{v: doc, present: true}}
	for i, seg := range path {
		last := i == len(path)-1
		var next []item
		for _, it := range items {
			child := item{label: join(it.label, seg.Name)}
			if m, ok := it.v.(map[string]any); ok {
				child.v, child.present = m[seg.Name]
			}
			list, isList := child.v.([]any)
			switch {
			case len(seg.Filters) > 0:
				if !isList {
					next = append(next, child)
					continue
				}
				matched := 0
				for k, e := range list {
					if matches(e, seg.Filters) {
						matched++
						next = append(next, item{label: child.label + "[" + elementName(e, k) + "]", v: e, present: true})
					}
				}
				if matched == 0 {
					res.Reasons = append(res.Reasons, fmt.Sprintf("no element of %s matches %s", child.label, filterString(seg.Filters)))
				}
			case isList && !last:
				if len(list) == 0 {
					res.Reasons = append(res.Reasons, fmt.Sprintf("%s is empty", child.label))
				}
				for k, e := range list {
					next = append(next, item{label: child.label + "[" + elementName(e, k) + "]", v: e, present: true})
				}
			default:
				next = append(next, child)
			}
		}
		items = next
	}
	for _, it := range items {
		if ok, why := r.compare(it); !ok {
			res.Reasons = append(res.Reasons, why)
		}
	}
	res.Met = len(res.Reasons) == 0
	return res
}

func join(label, name string) string {
	if label == "" {
		return name
	}
	return label + "." + name
}

// elementName names a list element by its "id" field when it has one,
// else by its index.
func elementName(e any, k int) string {
	if m, ok := e.(map[string]any); ok {
		if id, ok := m["id"].(string); ok && id != "" {
			return id
		}
	}
	return strconv.Itoa(k)
}

func filterString(fs []Filter) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		op := "="
		if f.Not {
			op = "!="
		}
		parts[i] = f.Field + op + quote(f.Value)
	}
	return strings.Join(parts, ",")
}

func matches(e any, fs []Filter) bool {
	m, ok := e.(map[string]any)
	if !ok {
		return false
	}
	for _, f := range fs {
		v, present := m[f.Field]
		eq := present && equal(v, f.Value)
		if eq == f.Not {
			return false
		}
	}
	return true
}

// equal compares a JSON value with a literal: numbers as numbers, booleans
// as booleans, two versions as versions (12.1 equals 12.1.0), any other
// strings without regard to case.
func equal(v any, lit string) bool {
	switch v := v.(type) {
	case bool:
		b, err := strconv.ParseBool(lit)
		return err == nil && b == v
	case float64:
		n, err := parseNumber(lit)
		return err == nil && n == v
	case json.Number:
		a, err1 := v.Float64()
		n, err2 := parseNumber(lit)
		return err1 == nil && err2 == nil && a == n
	case string:
		if a, ok := parseVersion(v, true); ok {
			if b, ok := parseVersion(lit, true); ok {
				return compareVersions(a, b) == 0
			}
		}
		return strings.EqualFold(v, lit)
	}
	return false
}

func (r *Requirement) compare(it item) (bool, string) {
	switch {
	case !it.present:
		return false, it.label + " is absent"
	case it.v == nil:
		return false, it.label + " is unknown (null)"
	}
	if r.Op == OpTruthy {
		switch v := it.v.(type) {
		case bool:
			return v, it.label + " is false"
		case float64:
			return v != 0, it.label + " is 0"
		case string:
			return v != "", it.label + " is empty"
		case []any:
			return len(v) > 0, it.label + " is empty"
		}
		return true, ""
	}
	got := func() string { return it.label + " is " + show(it.v) }
	switch v := it.v.(type) {
	case bool:
		if r.Op.ordered() {
			return false, fmt.Sprintf("%s is %v, which has no order", it.label, v)
		}
		ok := equal(v, r.Value)
		if r.Op == OpNe {
			ok = !ok
		}
		return ok, got()
	case float64:
		n, err := parseNumber(r.Value)
		if err != nil {
			return false, fmt.Sprintf("%s is the number %s; %q is not a finite number", it.label, show(v), r.Value)
		}
		return cmpHolds(r.Op, cmpFloat(v, n)), got()
	case string:
		if !r.Op.ordered() {
			ok := equal(v, r.Value)
			if r.Op == OpNe {
				ok = !ok
			}
			return ok, got()
		}
		a, ok := parseVersion(v, false)
		if !ok {
			return false, got() + ", not a version"
		}
		b, ok := parseVersion(r.Value, true)
		if !ok {
			return false, fmt.Sprintf("%q is not a version", r.Value)
		}
		return cmpHolds(r.Op, compareVersions(a, b)), got()
	}
	return false, got() + ", which cannot be compared with " + string(r.Op)
}

// errNumber is what parseNumber refuses.
var errNumber = errors.New("want a number: a finite decimal such as 8, 0.5 or 1e9 (not NaN, Inf or hex)")

// parseNumber reads a requirement's number: decimal digits with an
// optional sign, fraction and exponent, as JSON writes numbers. NaN, the
// infinities, hex and digit separators are refused: NaN compares false
// with everything (so `gpu_count!=NaN` would always hold and
// `gpu_count==NaN` never), and an infinite bound is no bound, so a gate
// written with one is a mistake to report, not to evaluate.
func parseNumber(s string) (float64, error) {
	if s == "" || strings.IndexFunc(s, func(r rune) bool {
		return !(r >= '0' && r <= '9' || r == '.' || r == 'e' || r == 'E' || r == '+' || r == '-')
	}) >= 0 {
		return 0, errNumber
	}
	n, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(n) || math.IsInf(n, 0) {
		return 0, errNumber
	}
	return n, nil
}

func show(v any) string {
	switch v := v.(type) {
	case string:
		return strconv.Quote(v)
	case float64:
		if v == math.Trunc(v) && math.Abs(v) < 1e15 {
			return strconv.FormatInt(int64(v), 10)
		}
		return strconv.FormatFloat(v, 'g', -1, 64)
	case []any:
		return fmt.Sprintf("a list of %d", len(v))
	case map[string]any:
		return "an object"
	}
	return fmt.Sprint(v)
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func cmpHolds(op Op, c int) bool {
	switch op {
	case OpEq:
		return c == 0
	case OpNe:
		return c != 0
	case OpGe:
		return c >= 0
	case OpLe:
		return c <= 0
	case OpGt:
		return c > 0
	case OpLt:
		return c < 0
	}
	return false
}

// parseVersion reads dotted decimal numbers ("12.1", "535.104.05",
// "v1.2"). With strict false, trailing text after the numbers is ignored
// ("6.8.0-45-generic" is 6.8.0), as reports hold versions with suffixes.
func parseVersion(s string, strict bool) ([]int, bool) {
	s = strings.TrimPrefix(s, "v")
	var parts []int
	i := 0
	for {
		start := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		if i == start || i-start > 9 {
			return nil, false
		}
		n, _ := strconv.Atoi(s[start:i])
		parts = append(parts, n)
		if i < len(s) && s[i] == '.' && i+1 < len(s) && isDigit(s[i+1]) {
			i++
			continue
		}
		break
	}
	if strict && i != len(s) {
		return nil, false
	}
	return parts, true
}

func compareVersions(a, b []int) int {
	for i := 0; i < max(len(a), len(b)); i++ {
		var x, y int
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y {
			return cmpFloat(float64(x), float64(y))
		}
	}
	return 0
}

// CheckAll parses every requirement, binds it to the type of report and
// evaluates it against report as it encodes to JSON. It returns the
// results in order; a requirement that does not parse or does not fit the
// report's type stops it with a *SyntaxError.
func CheckAll(exprs []string, report any) ([]Result, error) {
	if len(exprs) == 0 {
		return nil, nil // nothing to check: do not encode the report for nothing
	}
	reqs := make([]*Requirement, len(exprs))
	for i, e := range exprs {
		r, err := Parse(e)
		if err == nil {
			err = r.Bind(reflect.TypeOf(report))
		}
		if err != nil {
			return nil, err
		}
		reqs[i] = r
	}
	raw, err := json.Marshal(report)
	if err != nil {
		return nil, fmt.Errorf("encoding the report: %w", err)
	}
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("decoding the report: %w", err)
	}
	out := make([]Result, len(reqs))
	for i, r := range reqs {
		out[i] = r.Eval(doc)
	}
	return out, nil
}
