package explain

import (
	"embed"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// The device libraries' and frameworks' own error catalogues (catalogs/*.tsv,
// sources in catalogs/README.md), read into the classifier. They let a log
// be recognised by what the library says rather than by a sentence a rule
// was written from: an enum name alone ("cudaErrorLaunchOutOfResources",
// "HSA_STATUS_ERROR_OUT_OF_RESOURCES"), a number in the formats frameworks
// print ("Check failed: error == cudaSuccess (2 vs. 0)", "CUDA error 700",
// "hipError_t(1002)"), the library's own text after a framework's prefix
// ("CUDA failed with error invalid argument", "Status: initialization
// error"), or a framework message cut short by a tracker or a terminal
// ("Expected all tensors to be on the same device, but found at le").
//
// The files are embedded and parsed on the first classification only
// (getTables), so a devctl command that never reads a log pays nothing.

//go:embed catalogs/*.tsv
var catalogFS embed.FS

// codeFile is one enum catalogue and the family its numbers belong to. Two
// files of one family are two numberings of the same enum (CUDA before and
// after 10.1, cuDNN 8 and 9, HIP before and after 5); the first is current.
type codeFile struct {
	file   string
	family string
}

var codeFiles = []codeFile{
	{"cuda_runtime.tsv", "cuda"}, {"cuda_runtime_legacy.tsv", "cuda"},
	{"cuda_driver.tsv", "cu"},
	{"cudnn.tsv", "cudnn"}, {"cudnn_v8.tsv", "cudnn"},
	{"cublas.tsv", "cublas"}, {"cusolver.tsv", "cusolver"}, {"cusparse.tsv", "cusparse"}, {"cufft.tsv", "cufft"},
	{"curand.tsv", "curand"},
	{"nccl.tsv", "nccl"},
	{"hip.tsv", "hip"}, {"hip_legacy.tsv", "hip"},
	{"hsa.tsv", "hsa"}, {"ur.tsv", "ur"}, {"neuron.tsv", "nrt"},
	{"xla_status.tsv", "status"},
}

// codeEntry is one catalogue row.
type codeEntry struct {
	name    string
	number  int64
	message string
	cat     Category
	dev     Device
	family  string
	file    string
	legacy  bool // from the family's older numbering
}

// messageEntry is one row of messages.tsv: a framework's message, or the
// literal run of it that carries no formatted value.
type messageEntry struct {
	pattern string
	cat     Category
	dev     Device
}

// catalogue is the parsed catalogues.
type catalogue struct {
	// names maps a lower-cased enum name to its row (the current
	// numbering's row when a name is in both).
	names map[string]*codeEntry
	// numbers maps family, then number, to rows: the current numbering's
	// first, then the legacy one's.
	numbers map[string]map[int64][]*codeEntry
	// texts are the libraries' error strings (cudaGetErrorString and the
	// like), lower-cased, with their rows.
	texts    []textEntry
	messages []messageEntry
}

type textEntry struct {
	text  string
	entry *codeEntry
}

var loadCatalogue = sync.OnceValue(func() *catalogue {
	c, err := parseCatalogues(catalogFS)
	if err != nil {
		// The files are embedded and checked by catalogs_test.go; a
		// malformed one is a build mistake, not a user's problem.
		panic("explain: " + err.Error())
	}
	return c
})

type catalogError struct{ msg string }

func (e *catalogError) Error() string { return e.msg }

// parseCatalogues reads every code catalogue and messages.tsv from fsys.
// It runs on every `doctor --log`, so it slices the files' text rather than
// splitting and copying it: a millisecond here is one the user waits for.
func parseCatalogues(fsys embed.FS) (*catalogue, error) {
	c := &catalogue{names: make(map[string]*codeEntry, 1024), numbers: map[string]map[int64][]*codeEntry{}}
	seenFamily := map[string]bool{}
	for _, cf := range codeFiles {
		b, err := fsys.ReadFile("catalogs/" + cf.file)
		if err != nil {
			return nil, err
		}
		legacy := seenFamily[cf.family]
		seenFamily[cf.family] = true
		rows, err := parseCodeTSV(string(b), cf.file)
		if err != nil {
			return nil, err
		}
		byNum := c.numbers[cf.family]
		if byNum == nil {
			byNum = map[int64][]*codeEntry{}
			c.numbers[cf.family] = byNum
		}
		seenText := map[string]bool{}
		for i := range rows {
			r := &rows[i]
			r.family, r.file, r.legacy = cf.family, cf.file, legacy
			low := lowerString(r.name)
			if _, ok := c.names[low]; !ok {
				c.names[low] = r
			}
			if cf.family != "status" || strings.ToUpper(r.name) == r.name && !strings.HasPrefix(r.name, "TF_") {
				// xla_status.tsv holds three name sets for the same
				// numbers; a printed number is absl's.
				byNum[r.number] = append(byNum[r.number], r)
			}
			if t := lowerString(r.message); t != "" && !legacy && t != low && !seenText[t] {
				seenText[t] = true
				c.texts = append(c.texts, textEntry{t, r})
			}
		}
	}
	b, err := fsys.ReadFile("catalogs/messages.tsv")
	if err != nil {
		return nil, err
	}
	err = eachTSVRow(string(b), 6, func(f []string) error {
		c.messages = append(c.messages, messageEntry{pattern: f[0], cat: Category(f[1]), dev: Device(f[2])})
		return nil
	})
	if err != nil {
		return nil, &catalogError{"messages.tsv: " + err.Error()}
	}
	return c, nil
}

// parseCodeTSV reads one code catalogue: name, number, message, category,
// device.
func parseCodeTSV(text, file string) ([]codeEntry, error) {
	out := make([]codeEntry, 0, strings.Count(text, "\n"))
	err := eachTSVRow(text, 5, func(f []string) error {
		n, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			return &catalogError{"number " + strconv.Quote(f[1])}
		}
		out = append(out, codeEntry{name: f[0], number: n, message: f[2], cat: Category(f[3]), dev: Device(f[4])})
		return nil
	})
	if err != nil {
		return nil, &catalogError{file + ": " + err.Error()}
	}
	return out, nil
}

// eachTSVRow calls fn with the fields of every row after the header; the
// fields are slices of text, reused between calls.
func eachTSVRow(text string, n int, fn func([]string) error) error {
	fields := make([]string, 0, n)
	first := true
	for len(text) > 0 {
		line := text
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			line, text = text[:i], text[i+1:]
		} else {
			text = ""
		}
		line = strings.TrimSuffix(line, "\r")
		if first || line == "" {
			first = false
			continue
		}
		fields = fields[:0]
		for len(fields) < n-1 {
			i := strings.IndexByte(line, '\t')
			if i < 0 {
				break
			}
			fields = append(fields, line[:i])
			line = line[i+1:]
		}
		fields = append(fields, line)
		if len(fields) != n || strings.IndexByte(line, '\t') >= 0 {
			return &catalogError{"want " + strconv.Itoa(n) + " fields in " + strconv.Quote(line)}
		}
		if err := fn(fields); err != nil {
			return err
		}
	}
	return nil
}

// lowerString is strings.ToLower for the ASCII text of the catalogues,
// returning s itself when it has no upper-case letter.
func lowerString(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			return strings.ToLower(s)
		}
	}
	return s
}

// notAnError are the rows that name success or a state, not a failure
// (catalogs/README.md, category rule 1); they never decide anything.
func (e *codeEntry) notAnError() bool {
	if e.number == 0 {
		return true
	}
	switch e.name {
	case "ncclInProgress", "HSA_STATUS_INFO_BREAK", "HSA_STATUS_CU_MASK_REDUCED",
		"CUDNN_STATUS_RUNTIME_IN_PROGRESS", "NRT_COLL_PENDING", "cudaErrorNotReady", "CUDA_ERROR_NOT_READY", "hipErrorNotReady":
		return true
	}
	return false
}

// outcomeOf is what a catalogue row means in a log, read with the line it
// sits on. specific is false when the row names no listed kind (a
// programming error such as "invalid argument"): the library still
// reported an error, which the corpus files under `other` on that device
// (`rocm_hip_error` for HIP and HSA), but any more specific hit outranks it.
func (e *codeEntry) outcomeOf(line string) (o outcome, specific, ok bool) {
	if e.notAnError() {
		return outcome{}, false, false
	}
	cat, dev := e.cat, e.dev
	if isUnknownCode(e.name) {
		// "unknown error" is the driver failing to start when it comes
		// from initialisation (cuInit, the device count) and an
		// unexplained runtime failure otherwise.
		if !initContext(line) {
			// "unknown error" mid-run names no listed kind.
			return outcome{CategoryOther, dev, "other"}, false, true
		}
		cat = CategoryNoGPUFound
	}
	if dev == DeviceAny || e.family == "status" {
		dev = inferDevice(line)
	}
	if cat == CategoryUnknown {
		switch e.family {
		case "status":
			return outcome{}, false, false // absl/TF statuses of user errors say nothing about a device
		case "hip", "hsa":
			cat = CategoryROCmHIPError
		default:
			cat = CategoryOther
		}
		return outcome{cat, dev, codeMessage(e, cat, dev)}, false, true
	}
	return outcome{cat, dev, codeMessage(e, cat, dev)}, true, true
}

func isUnknownCode(name string) bool {
	switch name {
	case "cudaErrorUnknown", "CUDA_ERROR_UNKNOWN", "hipErrorUnknown":
		return true
	}
	return false
}

// initContext tells a failure at start-up (the driver could not be used at
// all) from one in the middle of a run.
func initContext(line string) bool {
	low := strings.ToLower(line)
	return containsAny(low, "initializ", "initialis", "cuinit", "devicecount", "device count", "is_available", "_lazy_init",
		"cudasetdevice", "nvmlinit", "getdeviceproperties")
}

// codeMessages refines a code's category into a message id where the
// catalogue holds a more specific explanation.
var codeMessages = map[string]string{
	"cudaErrorIllegalAddress":            "cuda_launch_failure.illegal_access",
	"CUDA_ERROR_ILLEGAL_ADDRESS":         "cuda_launch_failure.illegal_access",
	"cudaErrorLaunchOutOfResources":      "cuda_launch_failure.resources",
	"CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES": "cuda_launch_failure.resources",
	"cudaErrorInvalidDeviceFunction":     "other.no_kernel_image",
	"cudaErrorNoKernelImageForDevice":    "other.no_kernel_image",
	"CUDA_ERROR_NO_BINARY_FOR_GPU":       "other.no_kernel_image",
	"cudaErrorSystemNotReady":            "other.fabric_manager",
	"CUDA_ERROR_SYSTEM_NOT_READY":        "other.fabric_manager",
	"hipErrorNoBinaryForGpu":             "rocm_hip_error.no_binary",
	"hipErrorInvalidDeviceFunction":      "rocm_hip_error.no_binary",
}

// codeMessage is the message id for a row's outcome.
func codeMessage(e *codeEntry, cat Category, dev Device) string {
	if m, ok := codeMessages[e.name]; ok && strings.HasPrefix(m, string(cat)+".") {
		return m
	}
	if isUnknownCode(e.name) && cat == CategoryNoGPUFound && dev == DeviceCUDA {
		return "no_gpu_found.cuda_unknown"
	}
	switch {
	case e.family == "cublas" && cat == CategoryOther:
		return "other.cublas"
	case cat == CategoryOutOfMemory && dev == DeviceROCm:
		return "out_of_memory.rocm"
	case cat == CategoryOutOfMemory && dev == DeviceXPU:
		return "out_of_memory.xpu"
	case cat == CategoryOutOfMemory && dev == DeviceMPS:
		return "out_of_memory.mps"
	case cat == CategoryOutOfMemory && dev == DeviceCPU:
		return "out_of_memory.cpu"
	case cat == CategoryOther && dev == DeviceXPU:
		return "other.xpu"
	case cat == CategoryOther && dev == DeviceNeuron:
		return "other.neuron"
	}
	return string(cat)
}

// namePrefixes are how every catalogued enum name begins; the matcher finds
// the prefix, the identifier around it is looked up.
var namePrefixes = []string{"cudaError", "CUDA_ERROR_", "CUDNN_STATUS_", "CUBLAS_STATUS_", "CUSOLVER_STATUS_",
	"CUSPARSE_STATUS_", "CUFFT_", "CURAND_STATUS_", "nccl", "hipError", "HSA_STATUS_", "HSA_EXT_STATUS_", "UR_RESULT_", "NRT_", "TF_"}

// identifierAt returns the identifier ([A-Za-z0-9_]) holding byte i of s.
func identifierAt(s string, i int) (string, int) {
	lo, hi := i, i
	for lo > 0 && isIdent(s[lo-1]) {
		lo--
	}
	for hi < len(s) && isIdent(s[hi]) {
		hi++
	}
	return s[lo:hi], lo
}

func isIdent(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// namesOnLine finds the catalogued enum names on a line, in order.
func (c *catalogue) namesOnLine(line string) []*codeEntry {
	var out []*codeEntry
	low := strings.ToLower(line)
	for i := 0; i < len(low); {
		best := -1
		for _, p := range namePrefixes {
			if j := strings.Index(low[i:], strings.ToLower(p)); j >= 0 && (best < 0 || i+j < best) {
				best = i + j
			}
		}
		if best < 0 {
			break
		}
		id, _ := identifierAt(line, best)
		if e := c.names[strings.ToLower(id)]; e != nil {
			out = append(out, e)
		} else if e := c.names[strings.ToLower(strings.TrimRight(id, "0123456789"))]; e != nil && len(id) > len(e.name) {
			// "CUDA_ERROR_OUT_OF_MEMORY2" cut into a number by a paste.
			out = append(out, e)
		}
		i = best + 1
		for i < len(line) && isIdent(line[i]) {
			i++
		}
	}
	return out
}

// statusNames are the absl/XLA status words as printed ("INTERNAL: ...",
// "XlaRuntimeError: RESOURCE_EXHAUSTED: ...") and TensorFlow's exception
// classes; unlike enum names they are ordinary words, so they count only
// in those shapes.
func (c *catalogue) statusOnLine(line string) *codeEntry {
	var found *codeEntry
	for i := 0; i < len(line); i++ {
		if !isIdent(line[i]) || i > 0 && isIdent(line[i-1]) {
			continue
		}
		j := i
		for j < len(line) && isIdent(line[j]) {
			j++
		}
		id := line[i:j]
		e := c.names[strings.ToLower(id)]
		if e == nil || e.family != "status" || e.name != id || e.notAnError() {
			i = j
			continue
		}
		shaped := false
		switch {
		case strings.HasSuffix(id, "Error"):
			// A TensorFlow exception class: "errors_impl.InternalError:".
			shaped = j < len(line) && line[j] == ':'
		case strings.HasPrefix(id, "TF_"):
			shaped = true
		default:
			// "INTERNAL: ...", "Status: UNAVAILABLE", "(INTERNAL)".
			shaped = j < len(line) && (line[j] == ':' || line[j] == ')') ||
				strings.HasSuffix(strings.ToLower(strings.TrimRight(line[:i], " (=:")), "status") ||
				strings.HasSuffix(strings.ToLower(strings.TrimRight(line[:i], " (=:")), "code")
		}
		if shaped && (found == nil || found.cat == CategoryUnknown) {
			found = e
		}
		i = j
	}
	return found
}

// numberFormats are the ways frameworks print a library's error number.
// Each names the family whose numbering applies; the number is group 1 and
// the text after it, when any, group 2.
// numberFormats is built on first use, not at start-up.
var numberFormats = sync.OnceValue(func() []numberFormat {
	return []numberFormat{
		// glog CHECKs in Caffe, MXNet, Paddle, PyTorch's THC:
		// "Check failed: error == cudaSuccess (2 vs. 0)  out of memory".
		nf("cuda", `(?i)(?:error|err|e|status|result)\s*==\s*cudaSuccess\s*\(?\s*(-?\d{1,4})\s+vs\.?\s*0\)?\s*(.*)`, "cudasuccess"),
		nf("cudnn", `(?i)==\s*CUDNN_STATUS_SUCCESS\s*\(?\s*(\d{1,4})\s+vs\.?\s*0\)?\s*(.*)`, "cudnn_status_success"),
		nf("cublas", `(?i)==\s*CUBLAS_STATUS_SUCCESS\s*\(?\s*(\d{1,4})\s+vs\.?\s*0\)?\s*(.*)`, "cublas_status_success"),
		// Caffe2: "status == CURAND_STATUS_SUCCESS. 102 vs 0".
		nf("curand", `(?i)==\s*CURAND_STATUS_SUCCESS\.?\s*\(?\s*(\d{1,4})\s+vs\.?\s*0\)?\s*(.*)`, "curand_status_success"),
		nf("cu", `(?i)==\s*CUDA_SUCCESS\s*\(?\s*(\d{1,4})\s+vs\.?\s*0\)?\s*(.*)`, "cuda_success"),
		nf("hip", `(?i)==\s*hipSuccess\s*\(?\s*(\d{1,4})\s+vs\.?\s*0\)?\s*(.*)`, "hipsuccess"),
		// "CUDA error 2 at ggml-cuda.cu:359: out of memory", "CUDA error: 35
		// (0x23)", "cuda runtime error (2) : out of memory", "Cuda failure
		// 700 'an illegal memory access'", "(External) CUDA error(719),
		// unspecified launch failure.", "CUDA Error(10): invalid device ordinal".
		nf("cuda", `(?i)\bcuda\s*(?:runtime\s+)?(?:error|failure|err)\s*:?\s*[\(\[]?\s*(\d{1,4})\s*[\)\]]?\s*[:,.]?\s*(?:\(0x[0-9a-f]+\)\s*)?(?:at \S+\s*)?(.*)`,
			"cuda error", "cudaerror", "cuda err", "cuda failure", "cuda runtime error"),
		// "CUDA Failure 999: Unknown Error", "cuda failed with 2".
		nf("cuda", `(?i)\bcuda\s+failed\s+with\s*:?\s*(?:error\s*)?(\d{1,4})\b\s*[:,.]?\s*(.*)`, "cuda failed with"),
		// THC: "THCudaCheck FAIL file=... line=70 error=30 : unknown error";
		// samples: "code=802(cudaErrorSystemNotReady)"; "error# 100".
		nf("cuda", `(?i)\b(?:error|code)\s*(?:=|#)\s*(\d{1,4})\b\s*[:(]?\s*(.*)`, "error=", "error =", "code=", "code =", "error#", "error #"),
		nf("cuda", `(?i)\bcuda\w*\s+returned\s+(?:error\s+)?(\d{1,4})\b\s*[:,.]?\s*(.*)`, "returned"),
		nf("cuda", `(?i)\bcudaError(?:_t)?\s*[:(=]?\s*(\d{1,4})\b\s*\)?\s*[:,.]?\s*(.*)`, "cudaerror"),
		// Driver API: "CUresult 2", "cuCtxCreate() error=101" is above.
		nf("cu", `(?i)\bCUresult\s*[:(=]?\s*(\d{1,4})\b\s*\)?\s*(.*)`, "curesult"),
		// PyTorch at CUDA initialisation: "... already set an error? Error 2:
		// out of memory", "Error 802: system not yet initialized".
		nf("cuda", `(?:Error|error) (\d{1,4}): (.*)`, "error "),
		// HIP: "hipError_t(1002)", "HIP error 98", "hipError 1053".
		nf("hip", `(?i)\bhip\s*(?:error|err)(?:_t)?\s*[:(]?\s*(\d{1,4})\b\s*\)?\s*[:,.]?\s*(.*)`, "hip"),
		// NCCL: "NCCL Error 2: unhandled system error".
		nf("nccl", `(?i)\bnccl\s+error\s*:?\s*(\d{1,2})\b\s*[:,.]?\s*(.*)`, "nccl error"),
		// Neuron: "nrt_tensor_allocate status=4".
		nf("nrt", `(?i)\bnrt\w*.*\bstatus\s*=\s*(\d{1,4})\b\s*(.*)`, "status="),
	}
})

// nf makes a numberFormat; lits are lower-case texts one of which the line
// must hold before the regexp runs (or is compiled: on first use only).
func nf(family, re string, lits ...string) numberFormat {
	return numberFormat{family: family, lits: lits, re: sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(re) })}
}

type numberFormat struct {
	family string
	lits   []string
	re     func() *regexp.Regexp
}

// numberAnchors are literal texts one of numberFormats needs on the line.
var numberAnchors = []string{"cudaSuccess", "CUDNN_STATUS_SUCCESS", "CUBLAS_STATUS_SUCCESS", "CURAND_STATUS_SUCCESS", "CUDA_SUCCESS", "hipSuccess",
	"cuda error", "cuda failure", "cuda runtime error", "cuda err", "cuda failed with", "error=", "error =", "code=", "error#", "error #",
	"returned", "cudaError", "CUresult", "Error ", "hip error", "hiperror", "hip err", "nccl error", "status="}

// byNumber finds a library's error number on a line and the row it names.
// Two numberings of one enum are told apart by the text printed after the
// number ("(30 vs. 0)  unknown error" is CUDA 9's 30), else by which of the
// two has the number, else the current one wins.
func (c *catalogue) byNumber(line string) (*codeEntry, bool) {
	lineLow := strings.ToLower(line)
	for _, nf := range numberFormats() {
		if !containsAny(lineLow, nf.lits...) {
			continue
		}
		m := nf.re().FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if nf.family == "cuda" && !strings.Contains(lineLow, "cuda") && !strings.Contains(lineLow, "thc") && !strings.Contains(lineLow, ".cu") {
			continue // "error=3" says nothing without CUDA on the line
		}
		n, err := strconv.ParseInt(m[1], 10, 64)
		if err != nil {
			continue
		}
		fam := nf.family
		rows := c.numbers[fam]
		if fam == "cudnn" && n < 1000 {
			rows = c.numbers["cudnn"]
		}
		cands := rows[n]
		if len(cands) == 0 {
			continue
		}
		after := ""
		if len(m) > 2 {
			after = strings.ToLower(strings.Trim(m[2], " '\"`:,.()"))
		}
		if after != "" {
			for _, e := range cands {
				if t := c.textOf(e); t != "" && textAgrees(after, t) {
					return e, true
				}
				if strings.HasPrefix(after, strings.ToLower(e.name)) {
					return e, true
				}
			}
		}
		return cands[0], true
	}
	return nil, false
}

// textOf is the row's error string; a legacy row takes the current row's
// text for the same name (the older texts were not collected).
func (c *catalogue) textOf(e *codeEntry) string {
	if e.message != "" {
		return strings.ToLower(e.message)
	}
	if cur := c.names[strings.ToLower(e.name)]; cur != nil {
		return strings.ToLower(cur.message)
	}
	return ""
}

// textAgrees reports whether the text a log prints agrees with a
// catalogue's string: it starts with it, or it is the string cut short
// (a tracker's or a terminal's cut) and long enough to say which.
func textAgrees(got, want string) bool {
	if strings.HasPrefix(got, want) {
		return true
	}
	got = strings.TrimRight(got, ".… ")
	return len(got) >= minCutText && strings.HasPrefix(want, got)
}

// minCutText is the shortest cut-short text that still names a message.
const minCutText = 12

// textAnchors are the framework prefixes after which a library's error
// string is printed: "CUDA error: <text>", "CUDA failed with error <text>",
// "Status: <text>", "cudaMalloc failed: <text>", "CUDA_ERROR_X: <text>".
var textAnchors = []string{"error: ", "Error: ", "ERROR: ", "failed with error ", "Status: ", "status: ", "failed: ", "error ", "Error "}

// byText finds a library's error string after one of textAnchors on a line
// that names the library's family.
func (c *catalogue) byText(line string) *codeEntry {
	low := strings.ToLower(line)
	fam := ""
	switch {
	case strings.Contains(low, "hip") || strings.Contains(low, "rocm"):
		fam = "hip"
	case strings.Contains(low, "cuda") || strings.Contains(low, "cudnn") || strings.Contains(low, "gpu"):
		fam = "cuda"
	default:
		return nil
	}
	for _, a := range textAnchors {
		al := strings.ToLower(a)
		for i := 0; i < len(low); {
			j := strings.Index(low[i:], al)
			if j < 0 {
				break
			}
			rest := strings.TrimLeft(low[i+j+len(al):], " '\"`")
			if e := c.textLookup(rest, fam); e != nil {
				return e
			}
			i += j + len(al)
		}
	}
	return nil
}

// textLookup finds the catalogue string of the family (CUDA's runtime and
// driver strings for "cuda") that the text begins with, the longest when
// several do. Only when none does may the text be one cut short, and then
// only if it is not itself a whole string ("operation not supported" is
// cudaErrorNotSupported, not the start of "operation not supported on
// global/shared address space") and all the strings it may be cut from
// agree on the category.
func (c *catalogue) textLookup(rest, fam string) *codeEntry {
	var best, cut *codeEntry
	bestLen, cuts := 0, 0
	restCut := strings.TrimRight(rest, ".… ")
	whole := false
	for _, t := range c.texts {
		f := t.entry.family
		if fam == "cuda" && f != "cuda" && f != "cu" || fam == "hip" && f != "hip" {
			continue
		}
		switch {
		case strings.HasPrefix(rest, t.text):
			if len(t.text) > bestLen {
				best, bestLen = t.entry, len(t.text)
			}
			if len(t.text) == len(restCut) {
				whole = true
			}
		case len(restCut) >= minCutText && strings.HasPrefix(t.text, restCut):
			if cut == nil || cut.cat != t.entry.cat {
				cuts++
			}
			cut = t.entry
		}
	}
	if best != nil {
		return best
	}
	if cuts == 1 && !whole {
		return cut
	}
	return c.textByWords(restCut, fam)
}

// textByWords finds a library string by its words when the log prints
// another version's wording ("all CUDA-capable devices are busy or
// unavailable" for CUDA 12's "CUDA-capable device(s) is/are busy or
// unavailable"): every word of three letters or more of the catalogue's
// string, plurals folded, must be among the first words of the text, and
// no string of another category may fit as well. Strings of fewer than
// four such words are left to the exact match: "invalid device ordinal"
// and "invalid device pointer" differ by one word.
func (c *catalogue) textByWords(rest, fam string) *codeEntry {
	have := map[string]bool{}
	n := 0
	for _, w := range textWords(rest) {
		if n++; n > 24 {
			break
		}
		have[w] = true
	}
	var best *codeEntry
	bestN, ties := 0, 0
	for _, t := range c.texts {
		f := t.entry.family
		if fam == "cuda" && f != "cuda" && f != "cu" || fam == "hip" && f != "hip" {
			continue
		}
		ws := textWords(t.text)
		if len(ws) < 4 {
			continue
		}
		all := true
		for _, w := range ws {
			if !have[w] {
				all = false
				break
			}
		}
		if !all {
			continue
		}
		switch {
		case len(ws) > bestN:
			best, bestN, ties = t.entry, len(ws), 0
		case len(ws) == bestN && best != nil && best.cat != t.entry.cat:
			ties++
		}
	}
	if ties > 0 {
		return nil
	}
	return best
}

// textWords splits a lower-cased text into its words of three letters or
// more, with a plural "s" dropped ("devices" and "device(s)" are one word).
func textWords(s string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9') }) {
		if len(w) < 3 {
			continue
		}
		if len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") {
			w = w[:len(w)-1]
		}
		out = append(out, w)
	}
	return out
}

// distinctiveText is the shortest a library string may be to be matched
// anywhere on a line, without a framework's prefix before it, and about
// how much of a message a line cut short must keep to count.
const distinctiveText = 24

// needleText is how much of a catalogue message the matcher looks for: a
// filter, confirmed on the line by messageAt. Shorter needles keep the
// automaton small (`doctor --log` builds it on every run).
const needleText = 16

// messageNeedle is the run of a catalogue message the matcher looks for:
// its first needleText bytes, ending at a word when one is near.
func messageNeedle(pattern string) string { return prefixAtWord(pattern, needleText) }

// prefixAtWord is the first n bytes of s, cut back to the last space when
// one is within n/3 of the end, so the run is words.
func prefixAtWord(s string, n int) string {
	if len(s) <= n {
		return s
	}
	p := s[:n]
	if i := strings.LastIndexByte(p, ' '); i >= n-n/3 {
		p = p[:i]
	}
	return p
}

// messageAt reports whether the line holds pattern at or after its needle:
// the whole pattern, or the pattern cut short by the end of the line.
func messageAt(line, pattern string) bool {
	low, pat := strings.ToLower(line), strings.ToLower(pattern)
	needle := strings.ToLower(messageNeedle(pattern))
	for i := 0; i < len(low); {
		j := strings.Index(low[i:], needle)
		if j < 0 {
			return false
		}
		rest := low[i+j:]
		if i+j > 0 && isIdent(low[i+j-1]) && isIdent(pat[0]) {
			i += j + 1 // inside a longer identifier
			continue
		}
		if strings.HasPrefix(rest, pat) {
			if len(rest) == len(pat) || !isIdent(pat[len(pat)-1]) || !isIdent(rest[len(pat)]) {
				return true
			}
			i += j + 1 // "NRT_RESOURCE" in "NRT_RESOURCE_NC"
			continue
		}
		rest = strings.TrimRight(rest, ".…` \t\"'*")
		if len(rest) >= len(prefixAtWord(pat, distinctiveText)) && strings.HasPrefix(pat, rest) {
			return true // cut short, with enough of the message left to say which
		}
		i += j + 1
	}
	return false
}

// derivedCodes follow another failure more often than they are one: NCCL
// reporting that a CUDA call or a peer failed, the runtime shutting down
// after an error elsewhere.
var derivedCodes = map[string]bool{
	"ncclUnhandledCudaError": true, "ncclRemoteError": true,
	"cudaErrorCudartUnloading": true, "CUDA_ERROR_DEINITIALIZED": true, "hipErrorDeinitialized": true,
}

// codeRules turns a way of finding catalogue rows on a line into rules: a
// row of a listed kind (weight wStrong), the same for rows that usually
// follow another failure (derived), and a row of no listed kind, which
// still says the library failed (weight wCatchAll).
func codeRules(id string, needles []string, find func(c *catalogue, line string) []*codeEntry) []rule {
	pick := func(kind int) func(string, []string) (Category, Device, string) {
		return func(line string, _ []string) (Category, Device, string) {
			for _, e := range find(loadCatalogue(), line) {
				o, specific, ok := e.outcomeOf(line)
				if !ok {
					continue
				}
				switch {
				case kind == 0 && specific && !derivedCodes[e.name],
					kind == 1 && specific && derivedCodes[e.name],
					kind == 2 && !specific:
					return o.cat, o.dev, o.msg
				}
			}
			return "", "", ""
		}
	}
	return []rule{
		{id: id, cat: CategoryOther, weight: wStrong, needles: needles, refine: pick(0), origin: DecidedByCatalogue},
		{id: id + ".derived", cat: CategoryOther, weight: wStrong, needles: needles, refine: pick(1), derived: true, origin: DecidedByCatalogue},
		{id: id + ".generic", cat: CategoryOther, weight: wCatchAll, needles: needles, refine: pick(2), origin: DecidedByCatalogue},
	}
}

// catalogueRules are the rules the catalogues give; they run in the same
// pass as the hand-written rules, after them in the table (a hand-written
// rule of equal score on the same line wins: its message is more specific).
//
// A catalogue message holding a needle of a derived hand-written rule (the
// watchdog's "collective operation timeout", "unhandled cuda error") is
// derived too: the catalogue says what the message is, not that it caused
// the failure.
func catalogueRules(hand []rule) []rule {
	c := loadCatalogue()
	var derivedNeedles []string
	for _, r := range hand {
		if r.derived {
			for _, n := range r.needles {
				derivedNeedles = append(derivedNeedles, strings.ToLower(n))
			}
		}
	}
	var rs []rule
	rs = append(rs, codeRules("catalog.name", namePrefixes, func(c *catalogue, line string) []*codeEntry {
		return c.namesOnLine(line)
	})...)
	rs = append(rs, codeRules("catalog.number", numberAnchors, func(c *catalogue, line string) []*codeEntry {
		if e, ok := c.byNumber(line); ok {
			return []*codeEntry{e}
		}
		return nil
	})...)
	rs = append(rs, codeRules("catalog.text", textAnchors, func(c *catalogue, line string) []*codeEntry {
		if e := c.byText(line); e != nil {
			return []*codeEntry{e}
		}
		return nil
	})...)
	// Library strings long enough to name their error anywhere on a line,
	// with no framework prefix ("all CUDA-capable devices are busy or
	// unavailable"), also when the line is cut after their first words.
	var long []string
	for _, t := range c.texts {
		f := t.entry.family
		if len(t.text) >= distinctiveText && (f == "cuda" || f == "cu" || f == "hip") && !t.entry.notAnError() {
			long = append(long, messageNeedle(t.text))
		}
	}
	rs = append(rs, codeRules("catalog.string", long, func(c *catalogue, line string) []*codeEntry {
		low := strings.ToLower(line)
		fam := "cuda"
		if strings.Contains(low, "hip") || strings.Contains(low, "rocm") {
			fam = "hip"
		}
		for i := 0; i < len(low); {
			j := -1
			for _, t := range c.texts {
				if len(t.text) < distinctiveText {
					continue
				}
				if k := strings.Index(low[i:], messageNeedle(t.text)); k >= 0 && (j < 0 || k < j) {
					j = k
				}
			}
			if j < 0 {
				return nil
			}
			if e := c.textLookup(low[i+j:], fam); e != nil {
				return []*codeEntry{e}
			}
			i += j + 1
		}
		return nil
	})...)
	var status []string
	for _, e := range c.names {
		if e.family == "status" && e.cat != CategoryUnknown {
			if strings.HasSuffix(e.name, "Error") {
				status = append(status, e.name+":")
			} else {
				status = append(status, e.name)
			}
		}
	}
	sort.Strings(status)
	// A status says the runtime failed; only with a device named near it
	// is that a device failure (gRPC's UNAVAILABLE is as often a network).
	rs = append(rs, rule{id: "catalog.status", cat: CategoryOther, weight: wCatchAll, needles: status, origin: DecidedByCatalogue,
		near: []string{"GPU", "gpu", "CUDA", "cuda", "cuDNN", "TPU", "tpu", "XLA", "Xla", "xla", "ROCm", "HIP"},
		refine: func(line string, _ []string) (Category, Device, string) {
			e := loadCatalogue().statusOnLine(line)
			if e == nil {
				return "", "", ""
			}
			o, _, ok := e.outcomeOf(line)
			if !ok {
				return "", "", ""
			}
			return o.cat, o.dev, o.msg
		}})
	// The frameworks' own messages (messages.tsv), matched by their first
	// words so a message cut short by a tracker or a terminal still counts.
	for i, m := range c.messages {
		derived := false
		for _, n := range derivedNeedles {
			if strings.Contains(strings.ToLower(m.pattern), n) {
				derived = true
			}
		}
		// A sentence is a framework's own message; a bare name
		// ("NRT_RESOURCE") weighs what an enum name does.
		w := wPrimary
		if !strings.Contains(m.pattern, " ") {
			w = wStrong
		}
		// The id ends with the message's line in messages.tsv.
		rs = append(rs, rule{id: "catalog.message." + strconv.Itoa(i+2), cat: m.cat, derived: derived, weight: w, needles: []string{messageNeedle(m.pattern)}, origin: DecidedByCatalogue,
			refine: func(line string, _ []string) (Category, Device, string) {
				if !messageAt(line, m.pattern) {
					return "", "", ""
				}
				dev := m.dev
				if dev == DeviceAny {
					dev = inferDevice(line)
				}
				return m.cat, dev, codeMessage(&codeEntry{}, m.cat, dev)
			}})
	}
	return rs
}
