package recommend

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"github.com/devctl/devctl/internal/backend"
	"github.com/devctl/devctl/internal/units"
)

// DeviceRef is a --device value read against the catalogue the way people
// write GPU names in their reports: "RTX 3090 24GB", "A100 80G", "h100",
// "4090", "2x RTX 3090", "M2 Max 96GB".
type DeviceRef struct {
	Device CatalogDevice
	// Memory is a size the name gives that its entry does not have (a
	// 48 GB RTX 4090, an M3 Max with 64 GB): the plan resizes the entry.
	// 0 when the entry's own memory stands.
	Memory int64
	// ReadAs says how a name that is not an entry's own was read, for the
	// plan's reasons; empty for a catalogue name or alias.
	ReadAs string
}

// deviceCount is a leading count of devices: "2x RTX 3090", "8 × A100",
// "4*H100".
var deviceCount = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*(\d{1,5})\s*[x×*]\s*(\S.*)$`) })

// SplitDeviceCount takes a leading count off a device name ("2x RTX 3090"
// is 2 and "RTX 3090"); n is 0 when the name has none.
func SplitDeviceCount(name string) (n int, rest string) {
	m := deviceCount().FindStringSubmatch(name)
	if m == nil {
		return 0, name
	}
	n, err := strconv.Atoi(m[1])
	if err != nil || n < 1 {
		return 0, name
	}
	return n, strings.TrimSpace(m[2])
}

// Words that do not tell one chip from another in how people write its
// name: the vendor and brand, the product line, the form factor and the
// memory type. "NVIDIA GeForce RTX 3090", "RTX3090" and "3090" are one
// chip; "Tesla V100-SXM2-32GB" and "V100 PCIe 32GB" are one chip and one
// memory size. Words that do tell chips apart stay ("Ti", "Super", "Max",
// "Pro", "NVL", "Ada", "Quadro": a Quadro RTX 6000 is not an RTX 6000 Ada).
var deviceNoise = map[string]bool{
	"nvidia": true, "geforce": true, "tesla": true, "rtx": true, "gtx": true,
	"amd": true, "radeon": true, "rx": true, "instinct": true,
	"intel": true, "apple": true, "google": true, "tpu": true,
	"data": true, "center": true, "datacenter": true, "gpu": true, "graphics": true, "card": true,
	"pcie": true, "sxm": true, "sxm2": true, "sxm3": true, "sxm4": true, "sxm5": true,
	"hbm2": true, "hbm2e": true, "hbm3": true, "hbm3e": true, "gddr6": true, "gddr6x": true, "gddr7": true,
	"vram": true, "memory": true, "with": true, "single": true, "nvlink": true,
	"workstation": true, "server": true, "edition": true, "maxq": true, "generation": true, "blackwell": true,
	// Apple's machines: the chip is the device ("MacBook Pro M2 24GB").
	"mac": true, "macbook": true, "imac": true, "mini": true, "studio": true, "air": true, "unified": true,
	// Where it runs ("Kaggle T4 16GB", "GCP A100 80GB").
	"colab": true, "kaggle": true, "gcp": true, "aws": true, "azure": true,
}

// memoryWord is a memory size written as one word (24gb, 80g, 16gib,
// 16384mib); memoryUnits are the units a size written apart takes
// ("24 GB"). units.ParseDeviceMemory reads either.
var memoryWord = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\d+(?:\.\d+)?(?:gb|gib|g|mib|mb)$`) })

var memoryUnits = []string{"gb", "gib", "g", "mib", "mb"}

// otherWord is a word that says nothing of the chip or its memory: a
// power limit (700W), a GPU core count (32-Core), an Apple Pro machine.
var otherWord = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(\d+w|\d+core|core)$`) })

// deviceCore reads a device name as its chip and the memory size it
// names, if any (badMemory for sizes no device has): "NVIDIA
// A100-SXM4-80GB" is ("a100", 80), "RTX 4060 Ti 16GB" ("4060ti", 16),
// "apple-m2-max-96gb" ("m2max", 96), "H100" ("h100", 0). Brand-prefixed
// words are split ("rtx3090" is "3090").
func deviceCore(name string) (core string, memGiB float64) {
	name = strings.ToLower(trademarks.Replace(name))
	for _, machine := range []string{"macbook pro", "mac pro"} {
		name = strings.ReplaceAll(name, machine, " ")
	}
	words := strings.FieldsFunc(name, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '.' })
	size := func(s string) float64 {
		b, err := units.ParseDeviceMemory(s)
		if err != nil {
			return 0 // another() makes it badMemory
		}
		return float64(b) / float64(units.GiB)
	}
	var b strings.Builder
	for i := 0; i < len(words); i++ {
		w := strings.Trim(words[i], ".")
		if memoryWord().MatchString(w) {
			memGiB = another(memGiB, size(w))
			continue
		}
		if _, err := strconv.ParseFloat(w, 64); err == nil && i+1 < len(words) && slices.Contains(memoryUnits, words[i+1]) {
			memGiB = another(memGiB, size(w+words[i+1])) // "24 GB"
			i++
			continue
		}
		if _, err := strconv.Atoi(w); err == nil && i+1 < len(words) && words[i+1] == "core" {
			i++ // "32-Core GPU"
			continue
		}
		if otherWord().MatchString(w) {
			continue
		}
		for _, brand := range []string{"rtx", "gtx", "rx"} {
			if rest, ok := strings.CutPrefix(w, brand); ok && rest != "" && unicode.IsDigit(rune(rest[0])) {
				w = rest
			}
		}
		if deviceNoise[w] {
			continue
		}
		b.WriteString(strings.ReplaceAll(w, ".", ""))
	}
	return b.String(), memGiB
}

// badMemory is deviceCore's memory for a name whose sizes cannot be a
// device's: two different ones ("A100 80GB 40GB"), or none at all ("0GB").
const badMemory = -1

// another is the memory a name gives once it gives mem after had.
func another(had, mem float64) float64 {
	switch {
	case mem <= 0, had == badMemory, had > 0 && had != mem:
		return badMemory
	}
	return mem
}

// sameMemory says whether a size someone wrote (24, 80, 15) is a
// catalogued total: within a GiB or 8%, for "T4 16GB" is a 15 GiB card and
// "H100 80GB" a 79.6 GiB one.
func sameMemory(catalogued, written float64) bool {
	return math.Abs(catalogued-written) <= max(1, 0.08*written)
}

// partChips are the entries (whose chips are cores) whose chip starts or
// ends with core, when they are one chip; a core of fewer than three
// characters, or without a digit, finds none (a family word is not a chip).
func partChips(list []CatalogDevice, cores []string, name, core string) ([]CatalogDevice, error) {
	if len(core) < 3 || !strings.ContainsAny(core, "0123456789") {
		return nil, nil
	}
	var found []CatalogDevice
	var chips []string
	for i, d := range list {
		c := cores[i]
		if c != core && (strings.HasPrefix(c, core) || strings.HasSuffix(c, core)) {
			found = append(found, d)
			if !slices.Contains(chips, c) {
				chips = append(chips, c)
			}
		}
	}
	if len(chips) <= 1 {
		return found, nil
	}
	var opts []string
	for _, d := range found {
		opts = append(opts, fmt.Sprintf("%s (%.0f GiB)", d.Name, d.TotalGiB))
	}
	return nil, inputf("invalid --device %q: it names more than one chip: %s; name one", name, strings.Join(opts, ", "))
}

// ResolveDevice reads a device name against the catalogue: an entry's
// name or alias first (FindDevice), then the chip and memory size the name
// gives (deviceCore), so "RTX 3090 24GB", "A100 80G", "h100" and "M2 Max
// 96GB" find their entries. A memory size no entry of the chip has keeps
// the chip and resizes it (a 48 GB RTX 4090, a 22 GB RTX 2080 Ti). A chip
// whose entries differ in memory when the name gives none ("a100", "v100",
// "rtx 3060"), or an Apple chip, whose memory is chosen per machine, is an
// input error naming the entries. ok is false for a name that is no chip
// of the catalogue.
func ResolveDevice(list []CatalogDevice, name string) (ref DeviceRef, ok bool, err error) {
	if d, found := FindDevice(list, name); found {
		return DeviceRef{Device: d}, true, nil
	}
	core, mem := deviceCore(name)
	if core == "" {
		return DeviceRef{}, false, nil
	}
	cores := make([]string, len(list))
	var chips []CatalogDevice
	for i, d := range list {
		if cores[i], _ = deviceCore(d.Name); cores[i] == core {
			chips = append(chips, d)
		}
	}
	if len(chips) == 0 {
		// A chip named by part of its name ("RTX 6000", "B580", "MI300"):
		// the entries whose chip starts or ends with it. One chip is it;
		// several are an input error naming them.
		var err error
		if chips, err = partChips(list, cores, name, core); err != nil || len(chips) == 0 {
			return DeviceRef{}, false, err
		}
	}
	if mem == badMemory || mem > 1<<20 {
		return DeviceRef{}, false, inputf("invalid --device %q: want one memory size above 0 and up to 1 PiB with the chip (e.g. %q)", name, "RTX 3090 24GB")
	}
	if mem > 0 {
		for _, d := range chips {
			if sameMemory(d.TotalGiB, mem) {
				return DeviceRef{Device: d, ReadAs: fmt.Sprintf("--device %q read as %s", name, d.Name)}, true, nil
			}
		}
		d := chips[0]
		return DeviceRef{Device: d, Memory: int64(mem * float64(units.GiB)),
			ReadAs: fmt.Sprintf("--device %q read as %s with %g GiB of memory (the catalogue's has %.0f GiB)", name, d.Name, mem, d.TotalGiB)}, true, nil
	}
	apple := chips[0].Backend == backend.MPS
	if !apple && !slices.ContainsFunc(chips, func(d CatalogDevice) bool { return !sameMemory(d.TotalGiB, chips[0].TotalGiB) }) {
		return DeviceRef{Device: chips[0], ReadAs: fmt.Sprintf("--device %q read as %s", name, chips[0].Name)}, true, nil
	}
	var opts []string
	for _, d := range chips {
		opts = append(opts, fmt.Sprintf("%s (%.0f GiB)", d.Name, d.TotalGiB))
	}
	if apple {
		return DeviceRef{}, false, inputf("invalid --device %q: an Apple chip's memory is chosen per machine: add it (--device %q) or name one of %s", name, name+" 64GB", strings.Join(opts, ", "))
	}
	return DeviceRef{}, false, inputf("invalid --device %q: the chip comes with more than one memory size: add it (--device %q) or name one of %s", name, fmt.Sprintf("%s %.0fGB", name, chips[len(chips)-1].TotalGiB), strings.Join(opts, ", "))
}
