package snapshot

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// RedactedHostname replaces the machine's name in a redacted snapshot.
const RedactedHostname = "redacted-host"

// uuidPattern matches a generic 8-4-4-4-12 UUID; NVIDIA's GPU-..., MIG-...
// and MIG-GPU-.../gi/ci identifiers keep their prefix and lose the UUID.
// Compiled on first use: every devctl run links this package (for --from),
// few redact.
var uuidPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
})

// serialLine matches "Serial Number : 1324...", "serial=..." and
// `"serial_number": "..."` lines; the value is submatch 1.
var serialLine = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?im)^[ \t]*[^:=\r\n]*serial[^:=\r\n]*[:=][ \t]*(\S[^\r\n]*?)[ \t]*\r?$`)
})

// notASerial are values vendors print when there is no serial; replacing
// them would change reports without hiding anything.
var notASerial = map[string]bool{
	"n/a": true, "[n/a]": true, "na": true, "none": true, "unknown": true, "not specified": true,
	"not available": true, "default string": true, "to be filled by o.e.m.": true, "system serial number": true,
	"0": true, "null": true, "[not supported]": true, "not supported": true,
}

// redactor replaces the hostname, serial numbers and UUIDs with stable
// placeholders. The same input always gets the same placeholder within one
// snapshot, whether it appears in a file, a path, a program's output, an
// environment variable or the NVML answer, so replayed drivers still join
// a GPU's UUID in nvidia-smi output to the same UUID in NVML.
//
// Serials are found first (collect*) in files named *serial*, in
// "serial: value" lines and in NVML fields named *serial*; then every
// occurrence of each one is replaced everywhere.
type redactor struct {
	on       bool
	hostname string
	uuids    map[string]string
	serials  map[string]string
	order    []string // serials, longest first, for replacement
}

func newRedactor(on bool, hostname string) *redactor {
	x := &redactor{on: on, uuids: map[string]string{}, serials: map[string]string{}}
	if on && len(hostname) >= 2 {
		x.hostname = hostname
	}
	return x
}

func (x *redactor) addSerial(v string) {
	v = strings.Trim(strings.TrimSpace(v), `"',;`)
	if len(v) < 4 || notASerial[strings.ToLower(v)] || strings.Trim(v, "0 ") == "" {
		return
	}
	if _, ok := x.serials[v]; ok {
		return
	}
	x.serials[v] = fmt.Sprintf("REDACTED-SERIAL-%d", len(x.serials)+1)
}

// collectFile finds serials in a file's contents.
func (x *redactor) collectFile(p string, b []byte) {
	if !x.on {
		return
	}
	if strings.Contains(strings.ToLower(path.Base(p)), "serial") {
		x.addSerial(string(b))
	}
	x.collectLines(b)
}

// collectLines finds "serial: value" lines in text.
func (x *redactor) collectLines(b []byte) {
	if !x.on {
		return
	}
	for _, m := range serialLine().FindAllSubmatch(b, -1) {
		x.addSerial(string(m[1]))
	}
}

// collectNVML finds string fields named *serial* in the NVML answer.
func (x *redactor) collectNVML(b []byte) {
	if !x.on {
		return
	}
	var v any
	if json.Unmarshal(b, &v) != nil {
		x.collectLines(b)
		return
	}
	var walk func(key string, v any)
	walk = func(key string, v any) {
		switch t := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(t))
			for k := range t {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				walk(k, t[k])
			}
		case []any:
			for _, e := range t {
				walk(key, e)
			}
		case string:
			if strings.Contains(strings.ToLower(key), "serial") {
				x.addSerial(t)
			}
		}
	}
	walk("", v)
}

// finish fixes the replacement order once every serial is known.
func (x *redactor) finish() {
	for s := range x.serials {
		x.order = append(x.order, s)
	}
	sort.Slice(x.order, func(i, j int) bool {
		if len(x.order[i]) != len(x.order[j]) {
			return len(x.order[i]) > len(x.order[j])
		}
		return x.order[i] < x.order[j]
	})
}

// bytes returns b with every identifier replaced (b itself when off).
func (x *redactor) bytes(b []byte) []byte { return x.replace(b, true) }

// path redacts a machine path: UUIDs and serials (/dev/disk/by-uuid/...)
// but not the hostname, which as a short common word ("vm", "gpu") would
// rename real directories such as /proc/sys/vm.
func (x *redactor) path(p string) string {
	if !x.on || p == "" {
		return p
	}
	return string(x.replace([]byte(p), false))
}

func (x *redactor) replace(b []byte, hostname bool) []byte {
	if !x.on || len(b) == 0 {
		return b
	}
	out := uuidPattern().ReplaceAllFunc(b, func(u []byte) []byte {
		key := strings.ToLower(string(u))
		ph, ok := x.uuids[key]
		if !ok {
			ph = fmt.Sprintf("00000000-0000-4000-8000-%012d", len(x.uuids)+1)
			x.uuids[key] = ph
		}
		return []byte(ph)
	})
	for _, s := range x.order {
		out = replaceToken(out, []byte(s), []byte(x.serials[s]))
	}
	if hostname && x.hostname != "" {
		out = replaceToken(out, []byte(x.hostname), []byte(RedactedHostname))
	}
	return out
}

func (x *redactor) str(s string) string {
	if !x.on || s == "" {
		return s
	}
	return string(x.bytes([]byte(s)))
}

// replaceToken replaces old where it stands as a whole token: not glued to
// letters, digits, '_' or '-' on either side, so a short hostname does not
// eat parts of words.
func replaceToken(b, old, repl []byte) []byte {
	if len(old) == 0 || !bytes.Contains(b, old) {
		return b
	}
	var out []byte
	i := 0
	for {
		j := bytes.Index(b[i:], old)
		if j < 0 {
			break
		}
		j += i
		end := j + len(old)
		if (j == 0 || !tokenByte(b[j-1])) && (end == len(b) || !tokenByte(b[end])) {
			out = append(out, b[i:j]...)
			out = append(out, repl...)
		} else {
			out = append(out, b[i:end]...)
		}
		i = end
	}
	if out == nil {
		return b
	}
	return append(out, b[i:]...)
}

func tokenByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}
