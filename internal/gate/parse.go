// Package gate is devctl's requirement language: small expressions over a
// JSON report that a CI job can gate on, such as `gpu_count>=8`,
// `summary.supports_bf16` or
// `devices[backend=cuda].pcie_link.width_current==16`.
//
// Parse turns text into a Requirement (a pure function with a fuzz
// target); Bind checks its field names against the Go type of the report;
// Eval decides it against the report decoded from JSON. The grammar and
// the comparison rules are documented in docs/ci.md.
package gate

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/devctl/devctl/internal/safetext"
)

// Op is a comparison operator. The empty Op means "is true" (see Eval).
type Op string

// The operators a requirement may use.
const (
	OpTruthy Op = ""
	OpEq     Op = "=="
	OpNe     Op = "!="
	OpGe     Op = ">="
	OpLe     Op = "<="
	OpGt     Op = ">"
	OpLt     Op = "<"
)

// ordered reports whether op compares order rather than equality.
func (op Op) ordered() bool { return op == OpGe || op == OpLe || op == OpGt || op == OpLt }

// Requirement is one parsed expression: a path into the report, and
// optionally an operator and a literal.
type Requirement struct {
	// Source is the text the requirement was parsed from.
	Source string
	Path   []Segment
	Op     Op
	Value  string
	// ValuePos is the byte offset of Value in Source (for carets).
	ValuePos int
}

// Segment is one step of a path: a field name, and for a list, the
// filters that select its elements (every selected element must meet the
// requirement).
type Segment struct {
	Name    string
	Pos     int
	Filters []Filter
}

// Filter selects list elements whose Field equals (or, with Not, differs
// from) Value.
type Filter struct {
	Field string
	Value string
	Not   bool
	Pos   int
}

// SyntaxError is a requirement that does not parse; Pos is the byte offset
// the caret points at.
type SyntaxError struct {
	Source string
	Pos    int
	Msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("%s at column %d", e.Msg, e.Pos+1)
}

// Caret returns the source and a caret under the offending byte, as two
// lines, each indented by indent.
func (e *SyntaxError) Caret(indent string) string {
	return Caret(e.Source, e.Pos, indent)
}

// Caret draws src with a caret under byte offset pos. Control characters
// and bidirectional overrides (safetext.Unsafe) are shown as '?' so the
// caret stays aligned and the terminal safe.
func Caret(src string, pos int, indent string) string {
	var b strings.Builder
	col := 0
	for i, r := range src {
		if safetext.Unsafe(r) {
			r = '?'
		}
		if i < pos {
			col++
		}
		b.WriteRune(r)
	}
	return indent + b.String() + "\n" + indent + strings.Repeat(" ", col) + "^"
}

// MaxLen bounds the length of one requirement.
const MaxLen = 512

// Parse parses one requirement. The grammar:
//
//	requirement = path [ op value ]
//	path        = segment { "." segment }
//	segment     = name [ "[" filter { "," filter } "]" ]
//	filter      = name ( "=" | "==" | "!=" ) value
//	op          = "==" | "!=" | ">=" | "<=" | ">" | "<"
//	name        = letter { letter | digit | "_" | "-" }
//	value       = bare | '"' { char } '"'
//	bare        = { letter | digit | "." | "_" | "-" | ":" | "+" | "/" }
//
// Spaces are allowed around operators.
func Parse(src string) (*Requirement, error) {
	if len(src) > MaxLen {
		return nil, &SyntaxError{Source: src[:MaxLen], Pos: MaxLen - 1, Msg: fmt.Sprintf("requirement is %d bytes long; want at most %d", len(src), MaxLen)}
	}
	p := &parser{src: src}
	r := &Requirement{Source: src}
	p.space()
	if p.eof() {
		return nil, p.errf("empty requirement; want a field such as gpu_count>=8")
	}
	for {
		seg, err := p.segment()
		if err != nil {
			return nil, err
		}
		r.Path = append(r.Path, seg)
		if p.peek() != '.' {
			break
		}
		p.pos++
	}
	p.space()
	if p.eof() {
		return r, nil
	}
	op, ok := p.op()
	if !ok {
		return nil, p.errf("unexpected %q; want an operator (== != >= <= > <), a '.' or the end", p.src[p.pos:p.pos+1])
	}
	r.Op = op
	p.space()
	r.ValuePos = p.pos
	v, err := p.value()
	if err != nil {
		return nil, err
	}
	r.Value = v
	p.space()
	if !p.eof() {
		return nil, p.errf("unexpected %q after the value; want the end of the requirement (one requirement per --require)", p.src[p.pos:p.pos+1])
	}
	return r, nil
}

type parser struct {
	src string
	pos int
}

func (p *parser) eof() bool { return p.pos >= len(p.src) }

func (p *parser) peek() byte {
	if p.eof() {
		return 0
	}
	return p.src[p.pos]
}

func (p *parser) space() {
	for !p.eof() && (p.src[p.pos] == ' ' || p.src[p.pos] == '\t') {
		p.pos++
	}
}

func (p *parser) errf(format string, args ...any) error {
	return &SyntaxError{Source: p.src, Pos: p.pos, Msg: fmt.Sprintf(format, args...)}
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }

func (p *parser) name() (string, error) {
	start := p.pos
	if !isLetter(p.peek()) {
		if p.eof() {
			return "", p.errf("missing field name")
		}
		return "", p.errf("unexpected %q; want a field name (letters, digits, _ and -)", p.src[p.pos:p.pos+1])
	}
	for !p.eof() {
		c := p.src[p.pos]
		if !isLetter(c) && !isDigit(c) && c != '_' && c != '-' {
			break
		}
		p.pos++
	}
	return p.src[start:p.pos], nil
}

func (p *parser) segment() (Segment, error) {
	seg := Segment{Pos: p.pos}
	n, err := p.name()
	if err != nil {
		return seg, err
	}
	seg.Name = n
	if p.peek() != '[' {
		return seg, nil
	}
	p.pos++
	for {
		p.space()
		f := Filter{Pos: p.pos}
		if f.Field, err = p.name(); err != nil {
			return seg, err
		}
		p.space()
		switch {
		case strings.HasPrefix(p.src[p.pos:], "!="):
			f.Not = true
			p.pos += 2
		case strings.HasPrefix(p.src[p.pos:], "=="):
			p.pos += 2
		case p.peek() == '=':
			p.pos++
		default:
			if p.eof() {
				return seg, p.errf("unfinished filter; want = or != and a value, then ]")
			}
			return seg, p.errf("unexpected %q in a filter; want = or !=", p.src[p.pos:p.pos+1])
		}
		p.space()
		if f.Value, err = p.value(); err != nil {
			return seg, err
		}
		seg.Filters = append(seg.Filters, f)
		p.space()
		switch p.peek() {
		case ',':
			p.pos++
			continue
		case ']':
			p.pos++
			return seg, nil
		}
		if p.eof() {
			return seg, p.errf("missing ]")
		}
		return seg, p.errf("unexpected %q in a filter; want , or ]", p.src[p.pos:p.pos+1])
	}
}

func (p *parser) op() (Op, bool) {
	for _, op := range []Op{OpEq, OpNe, OpGe, OpLe, OpGt, OpLt} {
		if strings.HasPrefix(p.src[p.pos:], string(op)) {
			p.pos += len(op)
			return op, true
		}
	}
	if p.peek() == '=' { // a single '=' is a common slip for '=='
		p.pos++
		return OpEq, true
	}
	return "", false
}

func isBare(c byte) bool {
	return isLetter(c) || isDigit(c) || strings.IndexByte("._-:+/", c) >= 0
}

func (p *parser) value() (string, error) {
	if p.eof() {
		return "", p.errf("missing value")
	}
	if p.peek() == '"' {
		start := p.pos
		p.pos++
		for !p.eof() {
			c := p.src[p.pos]
			if c == '"' {
				p.pos++
				return p.src[start+1 : p.pos-1], nil
			}
			if c < 0x20 || c == 0x7f {
				return "", p.errf("control character in a quoted value")
			}
			if c >= utf8.RuneSelf {
				r, n := utf8.DecodeRuneInString(p.src[p.pos:])
				if safetext.Unsafe(r) {
					return "", p.errf("control character or bidirectional override %U in a quoted value", r)
				}
				p.pos += n
				continue
			}
			p.pos++
		}
		p.pos = start
		return "", p.errf("unterminated quoted value; want a closing \"")
	}
	start := p.pos
	for !p.eof() && isBare(p.src[p.pos]) {
		p.pos++
	}
	if start == p.pos {
		return "", p.errf("unexpected %q; want a value (a number, a version, true/false, a word or a \"quoted string\")", p.src[p.pos:p.pos+1])
	}
	return p.src[start:p.pos], nil
}

// String returns the requirement in canonical form: no spaces, values
// quoted only when they need it.
func (r *Requirement) String() string {
	var b strings.Builder
	for i, s := range r.Path {
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(s.Name)
		if len(s.Filters) > 0 {
			b.WriteByte('[')
			for j, f := range s.Filters {
				if j > 0 {
					b.WriteByte(',')
				}
				b.WriteString(f.Field)
				if f.Not {
					b.WriteString("!=")
				} else {
					b.WriteByte('=')
				}
				b.WriteString(quote(f.Value))
			}
			b.WriteByte(']')
		}
	}
	if r.Op != OpTruthy {
		b.WriteString(string(r.Op))
		b.WriteString(quote(r.Value))
	}
	return b.String()
}

func quote(v string) string {
	if v == "" {
		return `""`
	}
	for i := 0; i < len(v); i++ {
		if !isBare(v[i]) {
			return `"` + v + `"`
		}
	}
	return v
}
