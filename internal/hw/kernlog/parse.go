// Package kernlog reads the kernel log of the current boot and picks out the
// lines about accelerators: NVIDIA Xid events (with what the number means),
// a GPU fallen off the bus, amdgpu page faults, ring timeouts and resets,
// and error lines that name an accelerator's PCI address (TPU and Neuron
// chips, vfio-pci). Doctor reports them as findings; snapshots record them.
package kernlog

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// Limits that bound what is kept from a large log.
const (
	maxLines     = 20000
	maxLineBytes = 1024
	// MaxEvents bounds the distinct events kept; MaxExample bounds each
	// kept example line.
	MaxEvents  = 64
	MaxExample = 300
)

// Line is one kernel message with continuation lines joined.
type Line struct {
	// Time is the "[ 1843.308145]" stamp in seconds since boot, -1 when absent.
	Time float64
	Text string
}

// The patterns are compiled on first use: only doctor reads the log.
var (
	// "[ 1843.308145] msg" (dmesg), "Feb 14 05:03:41 host kernel: msg"
	// (journalctl -k, syslog), "6,1234,5678,-;msg" (/dev/kmsg).
	dmesgStamp   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\[\s*(\d+\.\d+)\]\s?`) })
	journalStamp = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z]{3} [ \d]\d \d\d:\d\d:\d\d \S+ kernel: `) })
	kmsgPrefix   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\d+,\d+,(\d+),[^;]*;`) })
)

// Parse splits dmesg, journalctl -k or /dev/kmsg text into messages. A line
// that starts with white space and carries no stamp continues the message
// before it (NVRM prints "fallen off the bus" over three lines); kmsg's
// " KEY=value" dictionary lines are dropped.
func Parse(b []byte) []Line {
	var out []Line
	n := 0
	for len(b) > 0 && n < maxLines {
		raw := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			raw, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		n++
		if len(raw) > maxLineBytes {
			raw = raw[:maxLineBytes]
		}
		s := strings.TrimRight(string(raw), "\r")
		if strings.TrimSpace(s) == "" {
			continue
		}
		t := -1.0
		stamped := false
		// Stamps are looked for after any indentation (pasted and piped
		// logs are often indented); only an unstamped indented line
		// continues the message before it.
		indented := s[0] == ' ' || s[0] == '\t'
		s = strings.TrimLeft(s, " \t")
		if m := dmesgStamp().FindStringSubmatch(s); m != nil {
			t, _ = strconv.ParseFloat(m[1], 64)
			s, stamped = s[len(m[0]):], true
		} else if m := journalStamp().FindString(s); m != "" {
			s, stamped = s[len(m):], true
		} else if m := kmsgPrefix().FindStringSubmatch(s); m != nil {
			if us, err := strconv.ParseFloat(m[1], 64); err == nil {
				t = us / 1e6
			}
			s, stamped = s[len(m[0]):], true
		}
		if !stamped && indented && len(out) > 0 {
			cont := strings.TrimSpace(s)
			if strings.Contains(cont, "=") && !strings.Contains(cont, " ") {
				continue // kmsg dictionary line
			}
			last := &out[len(out)-1]
			if len(last.Text) < maxLineBytes {
				last.Text += " " + cont
			}
			continue
		}
		out = append(out, Line{Time: t, Text: strings.TrimSpace(s)})
	}
	return out
}

// Severity of an event.
const (
	// SevHardware: the device or its link is failing (ECC, fallen off the bus).
	SevHardware = "hardware"
	// SevApplication: a process did something wrong (MMU fault, exception).
	SevApplication = "application"
	// SevDriver: the driver or firmware hit trouble (resets, timeouts).
	SevDriver = "driver"
)

// Event is a device line the log holds.
type Event struct {
	// Source is nvidia, amdgpu, or the driver prefix of the line.
	Source string `json:"source"`
	// Device is the PCI address the line names, "" when it names none.
	Device string `json:"device,omitempty"`
	// Xid is the NVIDIA Xid number, 0 for other events.
	Xid      int    `json:"xid,omitempty"`
	Meaning  string `json:"meaning"`
	Severity string `json:"severity"`
	// Count is how many lines of this kind (same source, device, Xid and
	// meaning) the log holds; Example is the first, shortened.
	Count   int    `json:"count"`
	Example string `json:"example"`
}

// XidMeanings are what the Xid numbers users meet most mean, with their
// severity: NVIDIA's Xid catalogue (docs.nvidia.com/deploy/xid-errors) as
// summarised in devctl's research notes (ml-engineering debug notes and a
// third-party table); unlisted numbers are reported by number only.
var XidMeanings = map[int]struct{ Meaning, Severity string }{
	13:  {"graphics engine exception: usually an application error (out-of-bounds access, illegal instruction)", SevApplication},
	31:  {"GPU memory page fault (MMU fault): usually an application error (illegal address)", SevApplication},
	32:  {"invalid or corrupted push buffer stream", SevDriver},
	43:  {"GPU stopped processing: an application hit a fault and was stopped", SevApplication},
	45:  {"preemptive cleanup after a previous error: the process's channels were torn down", SevApplication},
	48:  {"double-bit ECC error: uncorrectable memory error", SevHardware},
	61:  {"internal micro-controller breakpoint/warning", SevDriver},
	62:  {"internal micro-controller halt", SevDriver},
	63:  {"ECC page retirement or row-remapping event recorded", SevHardware},
	64:  {"ECC page retirement or row-remapping recording failure", SevHardware},
	74:  {"NVLink error", SevHardware},
	79:  {"GPU has fallen off the bus: it no longer answers on PCIe (power, thermals, riser, slot)", SevHardware},
	92:  {"high single-bit ECC error rate", SevHardware},
	94:  {"contained ECC error: the affected application was stopped", SevHardware},
	95:  {"uncontained ECC error: every application on the GPU is affected; reset the GPU", SevHardware},
	119: {"GSP firmware timed out", SevDriver},
	120: {"GSP firmware error", SevDriver},
	154: {"GPU recovery action changed (a reset or reboot is required)", SevHardware},
}

var (
	xidLine = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`NVRM: Xid \(PCI:([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}(?:\.[0-7])?)\): (\d+)`)
	})
	nvFallen = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`NVRM: The NVIDIA GPU ([0-9A-Fa-f]{4}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7]).*fallen off the bus`)
	})
	amdPrefix = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^amdgpu ([0-9A-Fa-f]{4}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7]): (.*)$`)
	})
	amdFault   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\[(\w+)\] (?:no-retry |retry )?page fault`) })
	amdTimeout = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`ring (\S+) timeout`) })
	amdReset   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`GPU reset|GPU recovery|gpu recover`) })
	amdRAS     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)uncorrectable|RAS .*error|ECC error`) })
	anyAddr    = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`\b([0-9A-Fa-f]{4}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7])\b`)
	})
	badWord = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\b(error|fault|failed|failure|timeout|timed out|hang|hung|reset)\b`)
	})
)

// Classify decides whether a message is an accelerator event. accel lists
// the PCI addresses ("0000:3b:00.0") of the machine's accelerators: any
// error line naming one of them counts too (TPU chips behind vfio-pci,
// Neuron devices, drivers devctl has no pattern for).
func Classify(text string, accel map[string]bool) (Event, bool) {
	if m := xidLine().FindStringSubmatch(text); m != nil {
		xid, _ := strconv.Atoi(m[2])
		e := Event{Source: "nvidia", Device: normAddr(m[1]), Xid: xid, Meaning: "Xid " + m[2], Severity: SevDriver}
		if km, ok := XidMeanings[xid]; ok {
			e.Meaning, e.Severity = km.Meaning, km.Severity
		}
		return e, true
	}
	if m := nvFallen().FindStringSubmatch(text); m != nil {
		km := XidMeanings[79]
		return Event{Source: "nvidia", Device: normAddr(m[1]), Xid: 79, Meaning: km.Meaning, Severity: km.Severity}, true
	}
	if m := amdPrefix().FindStringSubmatch(text); m != nil {
		dev, rest := normAddr(m[1]), m[2]
		switch {
		case amdFault().MatchString(rest):
			hub := amdFault().FindStringSubmatch(rest)[1]
			return Event{Source: "amdgpu", Device: dev, Meaning: "GPU page fault on " + hub + ": a process accessed memory it does not own (usually an application or runtime bug)", Severity: SevApplication}, true
		case amdTimeout().MatchString(rest):
			return Event{Source: "amdgpu", Device: dev, Meaning: "ring " + amdTimeout().FindStringSubmatch(rest)[1] + " timeout: the GPU hung", Severity: SevDriver}, true
		case amdRAS().MatchString(rest):
			return Event{Source: "amdgpu", Device: dev, Meaning: "memory or RAS error reported", Severity: SevHardware}, true
		case amdReset().MatchString(rest):
			return Event{Source: "amdgpu", Device: dev, Meaning: "GPU reset", Severity: SevDriver}, true
		}
		return Event{}, false
	}
	if len(accel) > 0 && badWord().MatchString(text) {
		for _, a := range anyAddr().FindAllString(text, 4) {
			if accel[normAddr(a)] {
				src := text
				if i := strings.IndexAny(src, " :"); i > 0 {
					src = src[:i]
				}
				return Event{Source: src, Device: normAddr(a), Meaning: "error reported for this accelerator", Severity: SevDriver}, true
			}
		}
	}
	return Event{}, false
}

// normAddr lower-cases an address and gives it a 4-digit domain and a
// function: NVRM prints "0000:3b:00" without the function, some drivers an
// 8-digit domain.
func normAddr(s string) string {
	s = strings.ToLower(s)
	parts := strings.Split(s, ":")
	if len(parts) != 3 {
		return s
	}
	dom := parts[0]
	if len(dom) > 4 {
		dom = dom[len(dom)-4:]
	}
	dev := parts[2]
	if !strings.Contains(dev, ".") {
		dev += ".0"
	}
	return dom + ":" + parts[1] + ":" + dev
}

// Events classifies the lines and folds repeats: one event per source,
// device, Xid and meaning, counted, in order of first appearance.
func Events(lines []Line, accel map[string]bool) []Event {
	var out []Event
	idx := map[string]int{}
	for _, l := range lines {
		e, ok := Classify(l.Text, accel)
		if !ok {
			continue
		}
		k := e.Source + "|" + e.Device + "|" + strconv.Itoa(e.Xid) + "|" + e.Meaning
		if i, seen := idx[k]; seen {
			out[i].Count++
			continue
		}
		if len(out) >= MaxEvents {
			continue
		}
		e.Count = 1
		e.Example = l.Text
		if len(e.Example) > MaxExample {
			e.Example = e.Example[:MaxExample] + "…"
		}
		idx[k] = len(out)
		out = append(out, e)
	}
	return out
}
