package explain

import (
	"bytes"
	"math"
	"regexp"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/devctl/devctl/internal/explain/learn"
)

// compiled is the rule and extractor tables ready to run. It is built on
// first use, not at init, so that commands which never classify a log pay
// nothing.
type compiled struct {
	rules      []compiledRule
	needles    []needleRef
	match      *matcher
	extractors []compiledExtractor
	globals    []int // indices of extractors with a global needle
}

type needleRef struct {
	text  []byte
	rules []int
}

var (
	compileOnce sync.Once
	tables      *compiled
)

func getTables() *compiled {
	compileOnce.Do(func() { tables = compile(append(append([]rule(nil), rules...), catalogueRules(rules)...), extractors) })
	return tables
}

func compile(rs []rule, xs []extractor) *compiled {
	c := &compiled{}
	index := map[string]int{}
	for i, r := range rs {
		cr := compiledRule{rule: r}
		if r.re != "" {
			// Compiled when one of the rule's needles first matches: most
			// rules never match a given log, and doctor --log pays the
			// table's construction on every run.
			src := r.re
			cr.re = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(src) })
		}
		c.rules = append(c.rules, cr)
		for _, n := range r.needles {
			n = strings.ToLower(n) // the matcher ignores ASCII case
			j, ok := index[n]
			if !ok {
				j = len(c.needles)
				index[n] = j
				c.needles = append(c.needles, needleRef{text: []byte(n)})
			}
			c.needles[j].rules = append(c.needles[j].rules, i)
		}
	}
	texts := make([][]byte, len(c.needles))
	for i, n := range c.needles {
		texts[i] = n.text
	}
	c.match = newMatcher(texts)
	for i, x := range xs {
		src := x.re
		ce := compiledExtractor{extractor: x, re: sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(src) })}
		if lit := literalPrefix(src); len(lit) >= 4 {
			ce.lit = lit
		}
		c.extractors = append(c.extractors, ce)
		if x.global != "" {
			c.globals = append(c.globals, i)
		}
	}
	return c
}

// Limits that bound work and memory whatever the input.
const (
	// lineWindow bounds how far a hit's line is followed each way, so a
	// log with no newlines costs the same as one with many.
	lineWindow = 4 << 10
	// keepPerRule is how many best hits each rule keeps.
	keepPerRule = 4
	// evidenceMax bounds one quoted evidence line, in bytes.
	evidenceMax = 400
	// contextWindow is how much text around the primary line is read for
	// numbers.
	contextWindow = 3 << 10
	// unknownTail is how much of the log's end is searched for the last
	// exception line when nothing device-related matched.
	unknownTail = 256 << 10
	// deviceWindow is how far around the primary line the device is looked
	// for when the line itself does not name one.
	deviceWindow = 1 << 10
	// maxNumberLines bounds the lines numbers are read from besides the
	// text around the primary line.
	maxNumberLines = 8
)

// Scores: weight dominates; the line's shape and position decide between
// hits of similar weight.
const (
	bonusException = 200
	penaltyWarning = 400
	bonusPosition  = 150
	penaltyDerived = 400
)

type lineKind int

const (
	kindPlain lineKind = iota
	kindException
	kindWarning
)

type hit struct {
	rule       int
	start, end int // the line, within the log
	off        int // where the needle matched
	kind       lineKind
	score      int
}

// Classify names the primary device error in log. It is pure and never
// panics; an empty or unrelated log gives CategoryUnknown.
func Classify(log []byte) (e Explanation) {
	// classify is written not to panic (FuzzClassify calls it without this
	// guard); the guard keeps a future bug from taking down `devctl doctor`.
	defer func() {
		if recover() != nil {
			e = Explanation{Category: CategoryUnknown, Device: DeviceAny, MessageID: string(CategoryUnknown), DecidedBy: DecidedByNone}
		}
	}()
	return classify(log, embeddedModel())
}

// classify is Classify with the learned fallback model (nil: rules and
// catalogues alone); the leave-one-source-out test passes models trained
// without the log's source.
func classify(log []byte, model *learn.Compact) (e Explanation) {
	t := getTables()
	best := make([][]hit, len(t.rules))
	// lastEnd[ni] is where the line (or window) of needle ni's last hit
	// ended: further hits of the same needle inside it add nothing, and
	// skipping them keeps the work linear in the log's size however dense
	// a single line is with one message (lineBounds reads up to 8 KiB).
	lastEnd := make([]int, len(t.needles))
	t.match.each(log, func(ni, off int) {
		if off < lastEnd[ni] {
			return
		}
		start, end := lineBounds(log, off)
		lastEnd[ni] = max(end, off+1)
		line := log[start:end]
		kind := kindOf(line)
		for _, ri := range t.needles[ni].rules {
			r := &t.rules[ri]
			if !r.lineOK(line) || !r.nearOK(log, start, end) {
				continue
			}
			keep(&best[ri], hit{rule: ri, start: start, end: end, off: off, kind: kind,
				score: score(r.weight, kind, off, len(log))})
		}
	})
	var all []hit
	for _, hs := range best {
		all = append(all, hs...)
	}
	// Decide every hit (bounded: keepPerRule per rule) before ordering
	// them: the root cause is chosen among what the hits mean.
	var cands []cand
	for _, h := range all {
		r := &t.rules[h.rule]
		c, d, msg, ok := r.decide(string(log[h.start:h.end]))
		if ok {
			cands = append(cands, cand{hit: h, cat: c, dev: d, msg: msg})
		}
	}
	cands = dropGuessesUnderCodes(t, cands)
	rootCause(t, log, cands)
	sort.SliceStable(cands, func(i, j int) bool {
		a, b := cands[i], cands[j]
		if a.score != b.score {
			return a.score > b.score
		}
		if a.start != b.start {
			return a.off > b.off
		}
		return a.rule < b.rule // one line: the table's order (rules.go)
	})
	var (
		win       *hit
		cat       Category
		dev       Device
		msg       string
		confirmed []hit
	)
	for i := range cands {
		if win == nil {
			win, cat, dev, msg = &cands[i].hit, cands[i].cat, cands[i].dev, cands[i].msg
		}
		if cands[i].cat == cat {
			confirmed = append(confirmed, cands[i].hit)
		}
	}
	if win == nil {
		if e, ok := modelDecide(log, model); ok {
			return e
		}
		return unknown(log)
	}
	e = Explanation{
		Category:  cat,
		Device:    dev,
		MessageID: msg,
		Line:      1 + bytes.Count(log[:win.start], []byte{'\n'}),
		Rule:      t.rules[win.rule].id,
		DecidedBy: t.rules[win.rule].origin,
	}
	if e.DecidedBy == "" {
		e.DecidedBy = DecidedByRule
	}
	if t.rules[win.rule].generic {
		for _, h := range confirmed {
			if r := &t.rules[h.rule]; !r.generic && r.dev != "" {
				e.Device = r.dev
				break
			}
		}
	}
	if e.Device == DeviceAny && t.rules[win.rule].dev == "" {
		// The primary line did not name a device; a related line may
		// ("... on /job:localhost/replica:0/task:0/device:GPU:0").
		for _, h := range confirmed {
			if d := inferDevice(string(log[h.start:h.end])); d != DeviceAny {
				e.Device = d
				break
			}
		}
	}
	if e.Device == DeviceAny && t.rules[win.rule].dev == "" {
		// Still none: the lines around the primary one usually say
		// ("... on /job:localhost/replica:0/task:0/gpu:0" under a
		// TensorFlow OOM).
		lo, hi := max(0, win.start-deviceWindow), min(len(log), win.end+deviceWindow)
		e.Device = inferDevice(string(log[lo:hi]))
	}
	e.Evidence = evidence(log, *win, confirmed)
	e.Numbers = readNumbers(t, log, *win, confirmed, cat)
	if e.Device == DeviceAny && len(e.Numbers.Devices) > 0 {
		e.Device = deviceFromMismatch("found at least two devices, " + strings.Join(e.Numbers.Devices, " and "))
	}
	e.Confidence = confidence(t.rules[win.rule].weight, win.kind)
	return e
}

// decide applies the rule's regexp and refinement to a line.
func (r *compiledRule) decide(line string) (Category, Device, string, bool) {
	var sub []string
	if r.re != nil {
		sub = r.re().FindStringSubmatch(line)
		if sub == nil {
			return "", "", "", false
		}
	}
	cat, dev, msg := r.cat, r.dev, r.msg
	if r.refine != nil {
		c, d, m := r.refine(line, sub)
		if c == "" {
			return "", "", "", false
		}
		cat, dev = c, d
		if m != "" {
			msg = m
		} else if c != r.cat {
			msg = ""
		}
	}
	if dev == "" {
		dev = inferDevice(line)
	}
	if msg == "" {
		msg = string(cat)
	}
	return cat, dev, msg, true
}

// hypothetical phrases introduce an error a program or a reply only
// mentions ("If you get `CUDA error: invalid device function` errors, the
// above might be the cause"); such a line is advice, not a failure.
var hypothetical = [][]byte{[]byte("If you get"), []byte("if you get"), []byte("If you see"), []byte("if you see"),
	[]byte("If you encounter"), []byte("if you encounter")}

// nearWindow bounds how far around a hit a rule's near words are looked
// for (the work stays bounded however long the log).
const nearWindow = 4 << 10

// nearOK checks the rule's context words around the hit's line.
func (r *compiledRule) nearOK(log []byte, start, end int) bool {
	if len(r.near) == 0 {
		return true
	}
	lo, hi := max(0, start-nearWindow), min(len(log), end+nearWindow)
	for _, w := range r.near {
		if bytes.Contains(log[lo:hi], []byte(w)) {
			return true
		}
	}
	return false
}

// lineOK checks the cheap literal conditions.
func (r *compiledRule) lineOK(line []byte) bool {
	for _, h := range hypothetical {
		if bytes.Contains(line, h) {
			return false
		}
	}
	if len(r.also) > 0 {
		ok := false
		for _, a := range r.also {
			if bytes.Contains(line, []byte(a)) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	for _, n := range r.not {
		if bytes.Contains(line, []byte(n)) {
			return false
		}
	}
	return true
}

// keep inserts h into hs, keeping one hit per line: the rule's first hit
// (the root cause may be the earliest, rootcause.go) and the best of the
// others, a later hit winning a tie (hits come in log order, and in a long
// log many lines near the end get the same position bonus).
func keep(hs *[]hit, h hit) {
	for i, o := range *hs {
		if o.start == h.start {
			if h.score > o.score {
				(*hs)[i] = h
			}
			return
		}
	}
	if len(*hs) < keepPerRule {
		*hs = append(*hs, h)
		return
	}
	worst := 1 // slot 0 holds the rule's first hit
	for i := 2; i < len(*hs); i++ {
		if o := (*hs)[i]; o.score < (*hs)[worst].score || o.score == (*hs)[worst].score && o.off < (*hs)[worst].off {
			worst = i
		}
	}
	if h.score >= (*hs)[worst].score {
		(*hs)[worst] = h
	}
}

func score(weight int, kind lineKind, off, n int) int {
	s := weight * 10
	switch kind {
	case kindException:
		// A catch-all on an exception line ("XlaRuntimeError: ...",
		// "CUDA error: ...") still names no kind: it does not outrank a
		// specific message the log gave only as a warning.
		if weight > wCatchAll {
			s += bonusException
		}
	case kindWarning:
		s -= penaltyWarning
	}
	if n > 0 {
		s += int(int64(off) * bonusPosition / int64(n))
	}
	return s
}

func confidence(weight int, kind lineKind) float64 {
	c := float64(weight) / 100
	switch kind {
	case kindException:
		c += 0.05
	case kindWarning:
		c *= 0.75
	}
	c = math.Min(1, math.Max(0, c*0.95))
	return math.Round(c*100) / 100
}

// lineBounds returns the line around off, treating \r as a line break too
// (progress bars) and looking at most lineWindow bytes each way.
func lineBounds(b []byte, off int) (int, int) {
	lo := off - lineWindow
	if lo < 0 {
		lo = 0
	}
	start := lo
	if i := bytes.LastIndexAny(b[lo:off], "\r\n"); i >= 0 {
		start = lo + i + 1
	}
	hi := off + lineWindow
	if hi > len(b) {
		hi = len(b)
	}
	end := hi
	if i := bytes.IndexAny(b[off:hi], "\r\n"); i >= 0 {
		end = off + i
	}
	return start, end
}

// kindOf tells an exception line ("RuntimeError: ...", "what(): ...", a
// glog fatal "F0402 ...") from a warning line and from anything else.
func kindOf(line []byte) lineKind {
	if isWarning(line) {
		return kindWarning
	}
	if isException(line) {
		return kindException
	}
	return kindPlain
}

func isWarning(line []byte) bool {
	for _, w := range [][]byte{[]byte("Warning:"), []byte("warnings.warn"), []byte("WARNING"), []byte("[W "), []byte("warn(")} {
		if bytes.Contains(line, w) {
			return true
		}
	}
	s := trimDecor(line)
	// glog warning: "W0325 12:00:00.000 ..." and TF "W tensorflow/...".
	return len(s) > 5 && s[0] == 'W' && (s[1] == ' ' || isDigits(s[1:5]))
}

func isException(line []byte) bool {
	s := trimDecor(line)
	if len(s) > 5 && s[0] == 'F' && isDigits(s[1:5]) {
		return true // glog fatal
	}
	for _, p := range [][]byte{[]byte("what():"), []byte("terminate called"), []byte("Exception in "), []byte("Exception has occurred")} {
		if bytes.HasPrefix(s, p) {
			return true
		}
	}
	i := 0
	for i < len(s) && (s[i] == '_' || s[i] == '.' || s[i] >= 'a' && s[i] <= 'z' || s[i] >= 'A' && s[i] <= 'Z' || s[i] >= '0' && s[i] <= '9') {
		i++
	}
	if i == 0 || i >= len(s) || s[i] != ':' {
		return false
	}
	name := s[:i]
	return bytes.HasSuffix(name, []byte("Error")) || bytes.HasSuffix(name, []byte("Exception")) ||
		bytes.HasSuffix(name, []byte("Failure"))
}

func isDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(b) > 0
}

// trimDecor drops what issue trackers, rich tracebacks and torch.distributed
// put in front of a message: spaces, quotes, markdown, box drawing, "> ",
// "[rank0]:" and "(Worker pid=1)" prefixes.
func trimDecor(line []byte) []byte {
	s := line
	for {
		before := len(s)
		s = bytes.TrimLeft(s, " \t`'\"*>|#-:")
		s = bytes.TrimPrefix(s, []byte("│"))
		s = bytes.TrimPrefix(s, []byte("“"))
		s = bytes.TrimPrefix(s, []byte("”"))
		s = bytes.TrimPrefix(s, []byte("❱"))
		if len(s) > 0 && (s[0] == '[' || s[0] == '(') {
			closer := byte(']')
			if s[0] == '(' {
				closer = ')'
			}
			if j := bytes.IndexByte(s, closer); j > 0 && j < 80 {
				s = s[j+1:]
			}
		}
		if len(s) == before {
			return s
		}
	}
}

// evidence quotes the primary line, then up to two other lines confirmed
// for the same category (e.g. the kernel assertion before a device-side
// assert), in log order after the primary.
func evidence(log []byte, win hit, confirmed []hit) []string {
	out := []string{quote(log, win)}
	var more []hit
	for _, h := range confirmed {
		if h.start != win.start {
			more = append(more, h)
		}
	}
	sort.SliceStable(more, func(i, j int) bool { return more[i].score > more[j].score })
	if len(more) > 2 {
		more = more[:2]
	}
	sort.SliceStable(more, func(i, j int) bool { return more[i].off < more[j].off })
	for _, h := range more {
		q := quote(log, h)
		dup := false
		for _, o := range out {
			if o == q {
				dup = true
			}
		}
		if !dup && q != "" {
			out = append(out, q)
		}
	}
	return out
}

// quote trims a hit's line for display, keeping the needle in view when
// the line is long.
func quote(log []byte, h hit) string {
	line := log[h.start:h.end]
	off := h.off - h.start
	if len(line) > evidenceMax {
		lo := off - evidenceMax/3
		if lo < 0 {
			lo = 0
		}
		hi := lo + evidenceMax
		if hi > len(line) {
			hi = len(line)
			lo = max(0, hi-evidenceMax)
		}
		line = line[lo:hi]
		if lo > 0 {
			// Start at a word, not in the middle of one.
			if i := bytes.IndexByte(line, ' '); i >= 0 && i < 40 {
				line = line[i+1:]
			}
		}
	}
	s := strings.TrimSpace(string(bytes.TrimRight(trimDecor(line), " \t`*│")))
	return cleanUTF8(s)
}

func cleanUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "")
}

// readNumbers applies the extractors to the primary line, the other
// evidence, the text around the primary line, and (for driver-related
// categories) the last version lines anywhere in the log.
func readNumbers(t *compiled, log []byte, win hit, confirmed []hit, cat Category) Numbers {
	var n Numbers
	texts := []string{string(log[win.start:win.end])}
	seen := map[int]bool{win.start: true}
	for _, h := range confirmed {
		// Each line once, and a few: a long log confirms a category on
		// many lines, and every text costs every extractor.
		if !seen[h.start] && len(seen) < maxNumberLines {
			seen[h.start] = true
			texts = append(texts, string(log[h.start:h.end]))
		}
	}
	lo, hi := max(0, win.start-contextWindow), min(len(log), win.end+contextWindow)
	texts = append(texts, string(log[lo:hi]))
	for _, s := range texts {
		for _, x := range t.extractors {
			if sub := x.find(s); sub != nil {
				x.apply(&n, sub)
			}
		}
	}
	switch cat {
	case CategoryCUDADriverMismatch, CategoryNoGPUFound, CategoryOther, CategoryCUDNNError, CategoryNCCLError:
		for _, gi := range t.globals {
			x := t.extractors[gi]
			if i := lastIndex(log, []byte(x.global)); i >= 0 {
				s, e := lineBounds(log, i)
				if sub := x.find(string(log[s:e])); sub != nil {
					x.apply(&n, sub)
				}
			}
		}
	}
	return n
}

// lastIndex is bytes.LastIndex built on the SIMD forward search.
func lastIndex(b, sep []byte) int {
	last := -1
	for pos := 0; pos < len(b); {
		i := bytes.Index(b[pos:], sep)
		if i < 0 {
			break
		}
		last = pos + i
		pos = last + len(sep)
	}
	return last
}

// unknown builds the answer when nothing device-related matched, quoting
// the last exception line near the end of the log so the user sees what
// did fail.
func unknown(log []byte) Explanation {
	e := Explanation{Category: CategoryUnknown, Device: DeviceAny, MessageID: string(CategoryUnknown), DecidedBy: DecidedByNone}
	from := max(0, len(log)-unknownTail)
	tail := log[from:]
	end := len(tail)
	for end > 0 {
		start := bytes.LastIndexAny(tail[:end], "\r\n") + 1
		line := tail[start:end]
		if isException(line) {
			h := hit{start: from + start, end: from + end, off: from + start}
			e.Evidence = []string{quote(log, h)}
			e.Line = 1 + bytes.Count(log[:h.start], []byte{'\n'})
			break
		}
		end = start - 1
	}
	return e
}
