package serve

// The Prometheus text exposition format, version 0.0.4, written by hand so
// that devctl links no metrics library: prometheus/client_golang's package
// set-up (its default registry, protobuf descriptors, procfs) ran at every
// devctl start, `devctl probe` included (docs/performance.md).
//
// The format (https://prometheus.io/docs/instrumenting/exposition_formats/):
// per family a `# HELP name text` line, where backslash and line feed are
// escaped as \\ and \n, and a `# TYPE name type` line; then one line per
// sample, `name{label="value",...} value`, where a label value escapes
// backslash, double quote and line feed as \\, \" and \n; values are Go
// ParseFloat syntax, with NaN, +Inf and -Inf. The output is laid out as
// client_golang laid it out (families by name, labels by name, samples by
// label values, floats as strconv's shortest 'g'), so the answers are the
// bytes serve gave when it used client_golang (testdata/full.prom,
// internal/cmd/serve/testdata).

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// textContentType is the media type of /metrics. escaping=underscores says
// metric and label names use only the legacy characters [a-zA-Z0-9_:]
// (https://prometheus.io/docs/instrumenting/escaping_schemes), which all of
// devctl's do; client_golang v1.25.0 sent the same header.
const textContentType = "text/plain; version=0.0.4; charset=utf-8; escaping=underscores"

type metricType uint8

const (
	gauge metricType = iota
	counter
	summary
)

func (t metricType) String() string {
	switch t {
	case counter:
		return "counter"
	case summary:
		return "summary"
	}
	return "gauge"
}

// family is one metric: a name, a help text, a type, its label names and
// samples. A summary's samples carry the "quantile" label; its sum and
// count follow them as name_sum and name_count.
type family struct {
	name, help string
	typ        metricType
	labels     []string
	samples    []sample
	sum, count float64
}

// sample is one series: its label values, in the order of family.labels.
type sample struct {
	values []string
	value  float64
}

func newFamily(name, help string, typ metricType, labels ...string) *family {
	return &family{name: name, help: help, typ: typ, labels: labels}
}

// add appends a series. Label values are used as given: callers pass
// values from outside through labelValue first.
func (f *family) add(v float64, values ...string) {
	f.samples = append(f.samples, sample{values: values, value: v})
}

// appendText appends the families in the text format: by name, each with
// its samples ordered by label values (compared in the order of the label
// names). Of series with the same labels the first added is written, since
// a scraper refuses or drops repeats. A family without samples is left out.
func appendText(b []byte, fams []*family) []byte {
	fams = slices.Clone(fams)
	slices.SortFunc(fams, func(x, y *family) int { return strings.Compare(x.name, y.name) })
	for _, f := range fams {
		b = f.appendText(b)
	}
	return b
}

func (f *family) appendText(b []byte) []byte {
	if len(f.samples) == 0 && f.typ != summary {
		return b
	}
	// The label names in the order they are written.
	order := make([]int, len(f.labels))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(i, j int) int { return strings.Compare(f.labels[i], f.labels[j]) })
	samples := f.samples
	if f.typ != summary {
		samples = slices.Clone(samples)
		slices.SortStableFunc(samples, func(x, y sample) int {
			for _, i := range order {
				if c := cmp.Compare(x.values[i], y.values[i]); c != 0 {
					return c
				}
			}
			return 0
		})
		samples = slices.CompactFunc(samples, func(x, y sample) bool { return slices.Equal(x.values, y.values) })
	}

	b = append(b, "# HELP "...)
	b = append(b, f.name...)
	b = append(b, ' ')
	b = appendEscaped(b, f.help, false)
	b = append(b, "\n# TYPE "...)
	b = append(b, f.name...)
	b = append(b, ' ')
	b = append(b, f.typ.String()...)
	b = append(b, '\n')
	for _, s := range samples {
		b = append(b, f.name...)
		if len(order) > 0 {
			b = append(b, '{')
			for k, i := range order {
				if k > 0 {
					b = append(b, ',')
				}
				b = append(b, f.labels[i]...)
				b = append(b, `="`...)
				b = appendEscaped(b, s.values[i], true)
				b = append(b, '"')
			}
			b = append(b, '}')
		}
		b = append(b, ' ')
		b = appendFloat(b, s.value)
		b = append(b, '\n')
	}
	if f.typ == summary {
		b = append(b, f.name...)
		b = append(b, "_sum "...)
		b = appendFloat(b, f.sum)
		b = append(b, '\n')
		b = append(b, f.name...)
		b = append(b, "_count "...)
		b = appendFloat(b, f.count)
		b = append(b, '\n')
	}
	return b
}

// appendEscaped appends s with backslash and line feed escaped, and the
// double quote too in a label value. Bytes that are not UTF-8 become
// U+FFFD: the format is UTF-8, and a parser refuses a label value that
// is not.
func appendEscaped(b []byte, s string, quoted bool) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '\\':
				b = append(b, `\\`...)
			case c == '\n':
				b = append(b, `\n`...)
			case c == '"' && quoted:
				b = append(b, `\"`...)
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b = utf8.AppendRune(b, utf8.RuneError)
		} else {
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return b
}

// appendFloat writes v as the format wants it: NaN, +Inf, -Inf, else the
// shortest decimal that ParseFloat reads back as v (0 for both zeros).
func appendFloat(b []byte, v float64) []byte {
	switch {
	case math.IsNaN(v):
		return append(b, "NaN"...)
	case math.IsInf(v, +1):
		return append(b, "+Inf"...)
	case math.IsInf(v, -1):
		return append(b, "-Inf"...)
	case v == 0:
		return append(b, '0')
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}

// maxLabelValue bounds a label value, in bytes: device names come from
// sysfs and drivers, which may hold anything.
const maxLabelValue = 256

// labelValue makes a value read from the machine safe to export (issue
// 22): invalid UTF-8 becomes U+FFFD; control characters (C0, DEL and C1:
// line feeds, tabs, ESC and with it every terminal escape sequence's
// introducer) and the Unicode bidirectional controls (U+061C, U+200E,
// U+200F, U+202A-U+202E, U+2066-U+2069, which reorder what a terminal or
// editor shows) are removed; the result is cut to maxLabelValue bytes at a
// character boundary. So a scraper always parses the answer, and a person
// reading /metrics in a terminal sees the text, not what it would make the
// terminal do. The writer escapes backslashes and quotes.
func labelValue(s string) string {
	clean := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			clean = false
			break
		}
	}
	if clean && len(s) <= maxLabelValue {
		return s
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	var b strings.Builder
	b.Grow(min(len(s), maxLabelValue))
	for _, r := range s {
		if unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) {
			continue
		}
		if b.Len()+utf8.RuneLen(r) > maxLabelValue {
			break
		}
		b.WriteRune(r)
	}
	return b.String()
}
