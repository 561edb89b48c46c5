package cpuinfo

import (
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Info is what a Linux /proc/cpuinfo says, whichever architecture wrote
// it. The kernel prints a different set of keys per architecture (x86
// "flags", arm64 "Features" and "CPU part", ppc64 "cpu" and "clock", s390x
// "processor N: version=..."), so Parse recognises them all rather
// than choosing by the architecture devctl was built for: a tree from an
// s390x mainframe must parse the same on an amd64 laptop. Zero values mean
// the file did not say.
type Info struct {
	// Arch is the Go name of the architecture the file describes
	// (amd64, 386, arm64, arm, ppc64le, ppc64, s390x, riscv64, loong64).
	Arch string
	// Vendor is a readable vendor ("Intel", "AMD", "ARM", "Ampere", "IBM");
	// VendorID is the raw value (GenuineIntel, 0x41, IBM/S390).
	Vendor   string
	VendorID string
	// Model is the model name as the kernel prints it, or one derived from
	// the part number when the kernel prints none (arm64, s390x).
	Model string
	// Processors is the number of logical CPUs the file lists.
	Processors int
	// Sockets and Cores are known on x86 ("physical id", "core id",
	// "cpu cores") and s390x ("max thread id"); elsewhere they come from
	// sysfs topology.
	Sockets int
	Cores   int
	// Features are the instruction-set flags, lower-case as the kernel
	// names them, sorted and without duplicates.
	Features []string
	// MaxMHz is the highest clock the file states and MHzKey the key it
	// came from ("cpu MHz" on x86 is the current clock, not a maximum).
	MaxMHz float64
	MHzKey string
	// Family and ModelNumber are x86's "cpu family" and "model" of the
	// first processor; Implementer and Part are arm64's MIDR fields. bench
	// tells microarchitectures apart by them (Zen 4 from Zen 5, say).
	Family, ModelNumber int
	Implementer, Part   int
}

// Parse parses /proc/cpuinfo from any architecture. It never fails
// on odd contents: unknown keys are ignored and an empty or garbled file
// gives an empty Info.
func Parse(b []byte) Info {
	s := newCPUInfoScan()
	for line := range bytes.Lines(b) {
		k, v, ok := bytes.Cut(bytes.TrimSuffix(line, []byte("\n")), []byte(":"))
		if !ok {
			continue
		}
		key := strings.TrimSpace(string(k))
		if s.flagsSeen && (strings.EqualFold(key, "flags") || strings.EqualFold(key, "features")) {
			continue // the first processor's list stands for all: do not copy the others' (1.5 KB each)
		}
		s.add(key, strings.TrimSpace(string(v)))
	}
	info := s.info
	s.countCPUs(&info)
	s.clock(&info)
	info.Features = s.featureList()
	s.identify(&info)
	return info
}

// cpuinfoScan keeps what the lines said until the whole file is read: the
// meaning of most keys depends on which architecture wrote the file.
type cpuinfoScan struct {
	info      Info // VendorID, Family, ModelNumber, Processors as read
	features  map[string]bool
	flagsSeen bool
	cpuKey    string // ppc64 "cpu"
	archKey   string // arm "CPU architecture"
	isa       string // riscv "isa"
	family    string // loongarch "CPU Family"
	implement string // arm "CPU implementer"
	part      string // arm "CPU part"
	modelName string // "model name"
	legacy    string // arm32 "Processor"
	machine   string // s390x machine type
	s390Procs int
	declared  int // s390x "# processors"
	maxThread int // s390x "max thread id"
	mhz       map[string]float64
	// x86 topology
	curPhys    string
	havePhys   bool
	coresOf    map[string]int
	sibsOf     map[string]int
	corePairs  map[string]bool
	socketsSet map[string]bool
}

func newCPUInfoScan() *cpuinfoScan {
	return &cpuinfoScan{
		features: map[string]bool{}, maxThread: -1, mhz: map[string]float64{}, curPhys: "0",
		coresOf: map[string]int{}, sibsOf: map[string]int{}, corePairs: map[string]bool{}, socketsSet: map[string]bool{},
	}
}

// setOnce keeps the first value of a key that repeats per processor.
func setOnce(dst *string, v string) {
	if *dst == "" {
		*dst = v
	}
}

// add records one "key : value" line.
func (s *cpuinfoScan) add(key, val string) {
	lkey := strings.ToLower(key)
	switch {
	case lkey == "processor":
		// x86, arm64, ppc64: "processor : N". Old arm32 kernels print
		// "Processor : ARMv7 Processor rev 5 (v7l)" as a model name.
		if _, err := strconv.Atoi(val); err == nil {
			s.info.Processors++
			s.curPhys = "0"
		} else if key == "Processor" {
			setOnce(&s.legacy, val)
		}
	case strings.HasPrefix(lkey, "processor "):
		// s390x: "processor 0: version = FF,  identification = ..., machine = 2964"
		s.s390Procs++
		setOnce(&s.machine, fieldAfter(val, "machine"))
	case lkey == "# processors":
		s.declared, _ = strconv.Atoi(val)
	case lkey == "max thread id":
		s.maxThread, _ = strconv.Atoi(val)
	case lkey == "vendor_id" || lkey == "vendor":
		setOnce(&s.info.VendorID, val)
	case lkey == "model name":
		setOnce(&s.modelName, val)
	case lkey == "flags", lkey == "features":
		// x86 "flags", arm "Features": the first processor's list stands
		// for all.
		if !s.flagsSeen {
			s.flagsSeen = true
			for _, f := range strings.Fields(val) {
				s.features[strings.ToLower(f)] = true
			}
		}
	case lkey == "cpu implementer":
		setOnce(&s.implement, strings.ToLower(val))
	case lkey == "cpu part":
		setOnce(&s.part, strings.ToLower(val))
	case lkey == "cpu architecture":
		setOnce(&s.archKey, val)
	case lkey == "cpu" && key == "cpu":
		setOnce(&s.cpuKey, val)
	case lkey == "isa":
		setOnce(&s.isa, strings.ToLower(val))
	case lkey == "cpu family" && key == "CPU Family":
		s.family = val
	case key == "cpu family":
		if s.info.Family == 0 {
			s.info.Family, _ = strconv.Atoi(val)
		}
	case key == "model":
		if s.info.ModelNumber == 0 {
			s.info.ModelNumber, _ = strconv.Atoi(val)
		}
	case lkey == "physical id":
		s.curPhys, s.havePhys = val, true
		s.socketsSet[val] = true
	case lkey == "core id":
		s.corePairs[s.curPhys+"/"+val] = true
	case lkey == "cpu cores":
		if n, err := strconv.Atoi(val); err == nil && n > 0 {
			s.coresOf[s.curPhys] = n
		}
	case lkey == "siblings":
		if n, err := strconv.Atoi(val); err == nil && n > 0 {
			s.sibsOf[s.curPhys] = n
		}
	case lkey == "max mhz", lkey == "cpu mhz static", lkey == "cpu mhz", lkey == "clock":
		if f := parseMHz(val); f > s.mhz[lkey] {
			s.mhz[lkey] = f
		}
	}
}

// countCPUs sets Processors, Sockets and Cores: the entries listed, or
// what the file declares when it was cut short (s390x "# processors", x86
// "siblings" per package).
func (s *cpuinfoScan) countCPUs(info *Info) {
	if s.s390Procs > 0 {
		info.Processors = max(s.s390Procs, s.declared)
	} else if s.declared > info.Processors {
		info.Processors = s.declared
	}
	if s.havePhys {
		info.Sockets = len(s.socketsSet)
		sumCores, sumSibs := 0, 0
		for id := range s.socketsSet {
			sumCores += s.coresOf[id]
			sumSibs += s.sibsOf[id]
		}
		info.Cores = max(len(s.corePairs), sumCores)
		info.Processors = max(info.Processors, sumSibs)
	}
	if s.s390Procs > 0 && s.maxThread >= 0 {
		info.Cores = info.Processors / (s.maxThread + 1)
	}
}

// clock picks the most meaningful clock the file states: a maximum before
// a static clock before the current one.
func (s *cpuinfoScan) clock(info *Info) {
	for _, k := range [][2]string{{"max mhz", "max MHz"}, {"cpu mhz static", "cpu MHz static"}, {"clock", "clock"}, {"cpu mhz", "cpu MHz"}} {
		if f := s.mhz[k[0]]; f > 0 {
			info.MaxMHz, info.MHzKey = f, k[1]
			return
		}
	}
}

func (s *cpuinfoScan) featureList() []string {
	if len(s.features) == 0 {
		return nil
	}
	out := make([]string, 0, len(s.features))
	for f := range s.features {
		out = append(out, f)
	}
	sort.Strings(out)
	return out
}

// identify tells the architecture from the keys only it prints, and names
// the vendor and model the way that architecture encodes them.
func (s *cpuinfoScan) identify(info *Info) {
	info.Model = s.modelName
	if info.Model == "" {
		info.Model = s.legacy
	}
	switch {
	case s.s390Procs > 0 || strings.HasPrefix(info.VendorID, "IBM/S390"):
		info.Arch, info.Vendor = "s390x", "IBM"
		if info.Model == "" && s.machine != "" {
			info.Model = s390Name(s.machine)
		}
	case s.cpuKey != "" && (strings.HasPrefix(s.cpuKey, "POWER") || strings.HasPrefix(s.cpuKey, "PPC") || strings.Contains(s.cpuKey, "altivec")):
		info.Arch, info.Vendor = ppcArch(s.cpuKey), "IBM"
		if info.Model == "" {
			info.Model = s.cpuKey
		}
	case s.implement != "" || s.archKey != "":
		s.identifyARM(info)
	case strings.HasPrefix(s.isa, "rv64"):
		info.Arch = "riscv64"
	case strings.HasPrefix(s.isa, "rv32"):
		info.Arch = "riscv"
	case strings.Contains(strings.ToLower(s.family), "loongson"):
		info.Arch, info.Vendor = "loong64", "Loongson"
	case info.VendorID != "" && s.flagsSeen:
		info.Arch = "386"
		if s.features["lm"] {
			info.Arch = "amd64"
		}
		info.Vendor = X86Vendor(info.VendorID)
	}
}

// identifyARM reads the MIDR fields: implementer and part.
func (s *cpuinfoScan) identifyARM(info *Info) {
	info.Arch = "arm"
	if s.archKey == "8" || strings.EqualFold(s.archKey, "AArch64") || s.features["asimd"] {
		info.Arch = "arm64"
	}
	info.VendorID = s.implement
	info.Vendor = armVendor(s.implement)
	if n, err := strconv.ParseInt(s.implement, 0, 32); err == nil {
		info.Implementer = int(n)
	}
	if n, err := strconv.ParseInt(s.part, 0, 32); err == nil {
		info.Part = int(n)
	}
	if info.Model == "" && s.part != "" {
		info.Model = armPart(s.implement, s.part)
	}
}

// parseMHz reads "2400.000", "2300.000000MHz" or "5000".
func parseMHz(s string) float64 {
	s = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "MHz"))
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f <= 0 || f > 1e6 {
		return 0
	}
	return f
}

// fieldAfter finds "name = value" in an s390x processor line.
func fieldAfter(s, name string) string {
	for _, part := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(part, "=")
		if ok && strings.TrimSpace(k) == name {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// ppcArch infers the Go architecture of a POWER machine. cpuinfo does not
// state the byte order; POWER8 and newer run little-endian Linux in every
// current distribution, older POWER big-endian.
func ppcArch(cpu string) string {
	for _, gen := range []string{"POWER8", "POWER9", "POWER10", "POWER11"} {
		if strings.HasPrefix(cpu, gen) {
			return "ppc64le"
		}
	}
	return "ppc64"
}

func X86Vendor(id string) string {
	switch id {
	case "GenuineIntel":
		return "Intel"
	case "AuthenticAMD":
		return "AMD"
	case "HygonGenuine":
		return "Hygon"
	case "CentaurHauls", "  Shanghai  ":
		return "Zhaoxin"
	}
	return id
}

// armImplementers maps the MIDR implementer code to a name (as lscpu
// prints it).
var armImplementers = map[string]string{
	"0x41": "ARM", "0x42": "Broadcom", "0x43": "Cavium", "0x46": "Fujitsu",
	"0x48": "HiSilicon", "0x4e": "NVIDIA", "0x50": "APM", "0x51": "Qualcomm",
	"0x53": "Samsung", "0x56": "Marvell", "0x61": "Apple", "0x69": "Intel",
	"0x6d": "Microsoft", "0xc0": "Ampere",
}

// armParts names the parts devctl users meet most: boards and servers.
var armParts = map[string]string{
	"0x41/0xd03": "Cortex-A53", "0x41/0xd05": "Cortex-A55", "0x41/0xd08": "Cortex-A72",
	"0x41/0xd0b": "Cortex-A76", "0x41/0xd0c": "Neoverse-N1", "0x41/0xd40": "Neoverse-V1",
	"0x41/0xd49": "Neoverse-N2", "0x41/0xd4f": "Neoverse-V2", "0x41/0xd84": "Neoverse-V3",
	"0x41/0xd8e": "Neoverse-N3",
	"0xc0/0xac3": "Ampere-1", "0xc0/0xac4": "Ampere-1a",
	"0x48/0xd01": "Kunpeng-920", "0x46/0x001": "A64FX",
}

func armVendor(impl string) string {
	if v, ok := armImplementers[impl]; ok {
		return v
	}
	if impl == "" {
		return ""
	}
	return "implementer " + impl
}

func armPart(impl, part string) string {
	if n, ok := armParts[impl+"/"+part]; ok {
		return n
	}
	return fmt.Sprintf("%s part %s", armVendor(impl), part)
}

// s390Machines maps IBM Z machine types to model names.
var s390Machines = map[string]string{
	"2827": "zEC12", "2828": "zBC12", "2964": "z13", "2965": "z13s",
	"3906": "z14", "3907": "z14 ZR1", "8561": "z15", "8562": "z15 T02",
	"3931": "z16", "3932": "z16 A02",
}

func s390Name(machine string) string {
	if n, ok := s390Machines[machine]; ok {
		return fmt.Sprintf("IBM %s (%s)", n, machine)
	}
	return "IBM Z machine " + machine
}
