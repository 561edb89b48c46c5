// Package learn is the learned fallback of the log classifier: hashed word
// and character n-gram features of a log's error lines, a multinomial
// logistic regression trained on the corpus, and the compact int8 form the
// classifier embeds. It is pure (no I/O, no clock) and deterministic: the
// same corpus gives the same model bytes on the same architecture.
//
// The model answers only where the rules and the error catalogues found
// nothing; it exists for the wordings nobody wrote a rule for. Its figures
// are measured leave-one-source-out (internal/explain TestLOSO).
package learn

import (
	"bytes"
	"unicode/utf8"
)

// Feature kinds, hashed with the text so that "oom" as a word and "oom" as
// a character run are different features.
const (
	kindWord   = 'w'
	kindPart   = 'p' // a piece of a camelCase or snake_case identifier
	kindBigram = 'b'
	kindChar   = 'c'
)

// charGram is the length of the character n-grams taken inside words: long
// enough to say "alloc" or "hip_e", short enough to survive a word cut by
// a tracker or spelled another way.
const charGram = 4

// maxToken bounds one token: a 10 KB base64 blob is not a word.
const maxToken = 48

// DocFeatures is Features of a whole window plus the words and word pairs
// of its focus lines (the title a tracker shows, "# ...", and the last
// lines that say error, fail, exception or fatal) as features of their
// own: the same word weighs differently in the error line than in the
// prose, the environment dump or the code around it.
func DocFeatures(window []byte, buckets uint32, dst []uint32) []uint32 {
	start := len(dst)
	dst = featuresKind(window, buckets, dst, false)
	focus := 0
	for end := len(window); end > 0 && focus < 3; {
		s := bytes.LastIndexByte(window[:end], '\n') + 1
		line := window[s:end]
		end = s - 1
		if isFocus(line) {
			dst = featuresKind(line, buckets, dst, true)
			focus++
		}
	}
	for s := 0; s < len(window); {
		e := bytes.IndexByte(window[s:], '\n')
		if e < 0 {
			e = len(window) - s
		}
		if line := window[s : s+e]; bytes.HasPrefix(line, []byte("# ")) {
			dst = featuresKind(line, buckets, dst, true)
		}
		s += e + 1
	}
	return dedupe(dst, start)
}

var focusCues = [][]byte{[]byte("error"), []byte("fail"), []byte("exception"), []byte("fatal")}

func isFocus(line []byte) bool {
	var buf [512]byte
	low := lowerInto(buf[:0], line[:min(len(line), len(buf))])
	for _, c := range focusCues {
		if bytes.Contains(low, c) {
			return true
		}
	}
	return false
}

// dedupe sorts dst[start:] and drops repeats.
func dedupe(dst []uint32, start int) []uint32 {
	out := dst[start:]
	sortUint32(out)
	w := 0
	for k, v := range out {
		if k == 0 || v != out[w-1] {
			out[w] = v
			w++
		}
	}
	return dst[:start+w]
}

// Features appends to dst the distinct hashed features of text, reduced
// modulo buckets (a power of two), and returns it sorted. Features are:
// every word (letters, digits and '_', lower-cased; numbers of more than
// three digits become "0000" so sizes and line numbers do not count), every
// piece of an identifier split at case changes and underscores
// ("cudaErrorMemoryAllocation" gives "cuda", "error", "memory",
// "allocation"), every pair of neighbouring words, every character 4-gram
// inside a word with its boundaries marked, and every non-ASCII character
// (Chinese and Japanese logs have no spaces).
func Features(text []byte, buckets uint32, dst []uint32) []uint32 {
	start := len(dst)
	return dedupe(featuresKind(text, buckets, dst, false), start)
}

// featuresKind appends text's features unsorted; focus features are the
// words and word pairs only, hashed apart.
func featuresKind(text []byte, buckets uint32, dst []uint32, focus bool) []uint32 {
	mask := buckets - 1
	var (
		prev    []byte
		prevBuf [maxToken]byte
		tok     [maxToken + 2]byte
		low     [maxToken]byte
		scratch [maxToken + 8]byte
	)
	emit := func(kind byte, a, b []byte) {
		if focus {
			if kind != kindWord && kind != kindBigram {
				return
			}
			kind -= 'a' - 'A' // 'W', 'B'
		}
		dst = append(dst, hashFeature(kind, a, b)&mask)
	}
	for i := 0; i < len(text); {
		c := text[i]
		if c >= utf8.RuneSelf {
			_, n := utf8.DecodeRune(text[i:])
			emit(kindWord, text[i:i+n], nil)
			prev = nil
			i += n
			continue
		}
		if !isWordByte(c) {
			i++
			continue
		}
		j := i
		for j < len(text) && text[j] < utf8.RuneSelf && isWordByte(text[j]) {
			j++
		}
		raw := text[i:j]
		i = j
		if len(raw) > maxToken {
			prev = nil
			continue
		}
		n := copy(tok[:], raw)
		word := lowerInto(low[:0], tok[:n])
		if allDigits(word) && len(word) > 3 {
			word = append(word[:0], "0000"...)
		}
		emit(kindWord, word, nil)
		if prev != nil {
			emit(kindBigram, prev, word)
		}
		prev = append(prevBuf[:0], word...)
		if len(raw) > 3 {
			parts(tok[:n], func(p []byte) {
				if len(p) < len(raw) {
					emit(kindPart, lowerInto(scratch[:0], p), nil)
				}
			})
		}
		if len(word) >= charGram-1 && !allDigits(word) {
			b := append(scratch[:0], '^')
			b = append(b, word...)
			b = append(b, '$')
			for k := 0; k+charGram <= len(b); k++ {
				emit(kindChar, b[k:k+charGram], nil)
			}
		}
	}
	return dst
}

// hashFeature is FNV-1a over the kind, a and (for a pair) b, with a final
// avalanche so that the low bits a bucket keeps depend on every byte.
func hashFeature(kind byte, a, b []byte) uint32 {
	h := uint32(2166136261)
	h = (h ^ uint32(kind)) * 16777619
	for _, c := range a {
		h = (h ^ uint32(c)) * 16777619
	}
	if b != nil {
		h = (h ^ ' ') * 16777619
		for _, c := range b {
			h = (h ^ uint32(c)) * 16777619
		}
	}
	h ^= h >> 15
	h *= 0x2c1b3c6d
	h ^= h >> 12
	return h
}

func isWordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func allDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(b) > 0
}

func lowerInto(dst, b []byte) []byte {
	for _, c := range b {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// parts calls fn with the pieces of an identifier: split at '_' and where a
// lower-case letter or digit is followed by an upper-case one.
func parts(tok []byte, fn func([]byte)) {
	s := 0
	for k := 0; k <= len(tok); k++ {
		cut := k == len(tok) || tok[k] == '_' ||
			k > s && tok[k] >= 'A' && tok[k] <= 'Z' && (tok[k-1] >= 'a' && tok[k-1] <= 'z' || tok[k-1] >= '0' && tok[k-1] <= '9')
		if !cut {
			continue
		}
		if k-s >= 2 {
			fn(tok[s:k])
		}
		s = k
		if k < len(tok) && tok[k] == '_' {
			s = k + 1
		}
	}
}

// sortUint32 sorts in place (insertion sort for the short runs a line
// gives, a heap sort beyond: no allocation either way).
func sortUint32(a []uint32) {
	if len(a) < 24 {
		for i := 1; i < len(a); i++ {
			for j := i; j > 0 && a[j] < a[j-1]; j-- {
				a[j], a[j-1] = a[j-1], a[j]
			}
		}
		return
	}
	n := len(a)
	for i := n/2 - 1; i >= 0; i-- {
		siftDown(a, i, n)
	}
	for end := n - 1; end > 0; end-- {
		a[0], a[end] = a[end], a[0]
		siftDown(a, 0, end)
	}
}

func siftDown(a []uint32, i, n int) {
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		if r := l + 1; r < n && a[r] > a[l] {
			l = r
		}
		if a[i] >= a[l] {
			return
		}
		a[i], a[l] = a[l], a[i]
		i = l
	}
}

// Window cues: a line holding one of these is about a failure or a device.
var cues = [][]byte{
	[]byte("error"), []byte("fail"), []byte("exception"), []byte("fatal"), []byte("abort"), []byte("killed"),
	[]byte("assert"), []byte("traceback"), []byte("cannot"), []byte("can't"), []byte("unable"), []byte("not "),
	[]byte("no such"), []byte("segmentation"), []byte("core dumped"), []byte("memory"), []byte("oom"),
	[]byte("timeout"), []byte("timed out"), []byte("warn"), []byte("nccl"), []byte("cuda"), []byte("gpu"),
	[]byte("hip"), []byte("rocm"), []byte("mps"), []byte("metal"), []byte("xla"), []byte("tpu"), []byte("xpu"),
	[]byte("neuron"), []byte("device"), []byte("driver"), []byte("signal"), []byte("exit"), []byte("# "),
}

// Window limits: how far back the window looks and how much it keeps.
const (
	windowTail = 256 << 10
	windowMax  = 16 << 10
	// windowWhole is the size up to which a log is read whole: a pasted
	// excerpt is all context.
	windowWhole = 8 << 10
)

// Window returns the text the model reads from a log: the whole log when it
// is short, else the lines about a failure or a device (cues) among its
// last 256 KiB, the latest 16 KiB of them. The work is bounded whatever
// the log's size.
func Window(log []byte) []byte {
	if len(log) <= windowWhole {
		return log
	}
	tail := log[max(0, len(log)-windowTail):]
	var lines [][]byte
	total := 0
	for end := len(tail); end > 0 && total < windowMax; {
		start := bytes.LastIndexAny(tail[:end], "\r\n") + 1
		line := tail[start:end]
		end = start - 1
		if len(line) == 0 || len(line) > 4<<10 {
			if len(line) > 4<<10 {
				line = line[len(line)-4<<10:]
			} else {
				continue
			}
		}
		if hasCue(line) {
			lines = append(lines, line)
			total += len(line) + 1
		}
	}
	out := make([]byte, 0, total)
	for k := len(lines) - 1; k >= 0; k-- {
		out = append(out, lines[k]...)
		out = append(out, '\n')
	}
	return out
}

func hasCue(line []byte) bool {
	var buf [4 << 10]byte
	low := lowerInto(buf[:0], line[:min(len(line), len(buf))])
	for _, c := range cues {
		if bytes.Contains(low, c) {
			return true
		}
	}
	return false
}
