package explain

import (
	"bufio"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// catalogDir holds the frameworks' own error catalogues as data, one TSV per
// catalogue; catalogs/README.md names the source and version of each.
const catalogDir = "catalogs"

// codeCatalogHeader and messageCatalogHeader are the exact first lines.
const (
	codeCatalogHeader    = "name\tnumber\tmessage\tcategory\tdevice"
	messageCatalogHeader = "pattern\tcategory\tdevice\tproject\tfile\tversion"
)

// codeCatalogs are the enum catalogues; each must exist, so a file lost in a
// move fails here rather than silently shrinking the data.
var codeCatalogs = []string{
	"cuda_runtime.tsv", "cuda_runtime_legacy.tsv", "cuda_driver.tsv",
	"cudnn.tsv", "cudnn_v8.tsv", "cublas.tsv", "cusolver.tsv", "cusparse.tsv", "cufft.tsv", "curand.tsv",
	"nccl.tsv", "hip.tsv", "hip_legacy.tsv", "hsa.tsv", "ur.tsv", "neuron.tsv", "xla_status.tsv",
}

// catalogDevices are the device names a catalogue row may carry.
var catalogDevices = []Device{DeviceCUDA, DeviceMPS, DeviceXLA, DeviceROCm, DeviceCPU, DeviceXPU, DeviceNeuron, DeviceAny}

// catalogRow is one line of a code catalogue.
type catalogRow struct {
	name    string
	number  int64
	message string
	cat     Category
	dev     Device
	line    int
}

// readCatalog reads one TSV: the header, then rows of exactly as many
// tab-separated fields.
func readCatalog(t *testing.T, name, header string) [][]string {
	t.Helper()
	f, err := os.Open(filepath.Join(catalogDir, name))
	if err != nil {
		t.Fatalf("opening catalogue: %v", err)
	}
	defer f.Close()
	want := strings.Count(header, "\t") + 1
	var rows [][]string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if n == 1 {
			if line != header {
				t.Fatalf("%s: header is %q, want %q", name, line, header)
			}
			continue
		}
		fields := strings.Split(line, "\t")
		if len(fields) != want {
			t.Errorf("%s:%d: %d fields, want %d", name, n, len(fields), want)
			continue
		}
		for _, fl := range fields {
			if fl != strings.TrimSpace(fl) {
				t.Errorf("%s:%d: field %q has surrounding whitespace", name, n, fl)
			}
		}
		rows = append(rows, fields)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("reading %s: %v", name, err)
	}
	if len(rows) == 0 {
		t.Errorf("%s: no rows", name)
	}
	return rows
}

func knownCategory(c Category) bool {
	for _, k := range Categories() {
		if c == k {
			return true
		}
	}
	return false
}

func knownDevice(d Device) bool {
	for _, k := range catalogDevices {
		if d == k {
			return true
		}
	}
	return false
}

// loadCodeCatalog parses and checks one code catalogue.
func loadCodeCatalog(t *testing.T, name string) []catalogRow {
	t.Helper()
	var out []catalogRow
	seen := map[string]int{}
	for i, f := range readCatalog(t, name, codeCatalogHeader) {
		line := i + 2
		if f[0] == "" {
			t.Errorf("%s:%d: empty name", name, line)
		}
		if prev, dup := seen[f[0]]; dup {
			t.Errorf("%s:%d: name %s already on line %d", name, line, f[0], prev)
		}
		seen[f[0]] = line
		num, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			t.Errorf("%s:%d: number %q: %v", name, line, f[1], err)
		}
		if !knownCategory(Category(f[3])) {
			t.Errorf("%s:%d: unknown category %q", name, line, f[3])
		}
		if !knownDevice(Device(f[4])) {
			t.Errorf("%s:%d: unknown device %q", name, line, f[4])
		}
		out = append(out, catalogRow{f[0], num, f[2], Category(f[3]), Device(f[4]), line})
	}
	return out
}

func TestCodeCatalogsAreWellFormed(t *testing.T) {
	for _, name := range codeCatalogs {
		t.Run(name, func(t *testing.T) { loadCodeCatalog(t, name) })
	}
}

func TestMessageCatalogIsWellFormed(t *testing.T) {
	seen := map[string]int{}
	for i, f := range readCatalog(t, "messages.tsv", messageCatalogHeader) {
		line := i + 2
		if f[0] == "" {
			t.Errorf("messages.tsv:%d: empty pattern", line)
		}
		if prev, dup := seen[f[0]]; dup {
			t.Errorf("messages.tsv:%d: pattern %q already on line %d", line, f[0], prev)
		}
		seen[f[0]] = line
		if !knownCategory(Category(f[1])) {
			t.Errorf("messages.tsv:%d: unknown category %q", line, f[1])
		}
		if !knownDevice(Device(f[2])) {
			t.Errorf("messages.tsv:%d: unknown device %q", line, f[2])
		}
		for j, col := range []string{"project", "file", "version"} {
			if f[3+j] == "" {
				t.Errorf("messages.tsv:%d: empty %s", line, col)
			}
		}
	}
}

// TestEveryCatalogIsListed keeps the list above in step with the folder, so
// a new catalogue is checked the day it lands.
func TestEveryCatalogIsListed(t *testing.T) {
	got, err := filepath.Glob(filepath.Join(catalogDir, "*.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	want := append([]string{"messages.tsv"}, codeCatalogs...)
	for i := range got {
		got[i] = filepath.Base(got[i])
	}
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("catalogue files = %v, want %v", got, want)
	}
}

// TestCodeMessagesAgreeWithCatalogs checks the hand-kept message
// refinements in catalog.go against the catalogues: every name must be a
// catalogue row whose category the message id refines.
func TestCodeMessagesAgreeWithCatalogs(t *testing.T) {
	rows := map[string]catalogRow{}
	for _, f := range codeCatalogs {
		for _, r := range loadCodeCatalog(t, f) {
			if _, ok := rows[r.name]; !ok {
				rows[r.name] = r
			}
		}
	}
	for name, msg := range codeMessages {
		r, ok := rows[name]
		if !ok {
			t.Errorf("codeMessages names %s, which no catalogue has", name)
			continue
		}
		if !strings.HasPrefix(msg, string(r.cat)+".") {
			t.Errorf("codeMessages maps %s to %s, but its catalogue category is %s", name, msg, r.cat)
		}
	}
}

// TestEmbeddedCataloguesParse parses the embedded files the way the
// classifier does and checks every code row is reachable by name.
func TestEmbeddedCataloguesParse(t *testing.T) {
	c, err := parseCatalogues(catalogFS)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range codeCatalogs {
		for _, r := range loadCodeCatalog(t, f) {
			n++
			if c.names[strings.ToLower(r.name)] == nil {
				t.Errorf("%s: %s is not in the parsed catalogue", f, r.name)
			}
		}
	}
	if len(c.messages) == 0 || n == 0 {
		t.Errorf("parsed %d code rows and %d messages", n, len(c.messages))
	}
}
