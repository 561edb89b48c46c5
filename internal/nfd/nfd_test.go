package nfd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/devctl/devctl/internal/probe"
)

// reports are real probe reports (see internal/gate/testdata/README.md).
func reports(t *testing.T) map[string]*probe.Report {
	t.Helper()
	out := map[string]*probe.Report{}
	paths, _ := filepath.Glob("../gate/testdata/*.json")
	if len(paths) == 0 {
		t.Fatal("no reports")
	}
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var r probe.Report
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(p)] = &r
	}
	return out
}

func TestLabelsAreValidKubernetesLabels(t *testing.T) {
	for name, rep := range reports(t) {
		labels := Labels(rep)
		if len(labels) < 5 {
			t.Errorf("%s: only %d labels", name, len(labels))
		}
		for _, l := range labels {
			if errs := validation.IsQualifiedName(l.Key); len(errs) > 0 {
				t.Errorf("%s: key %q: %v", name, l.Key, errs)
			}
			if errs := validation.IsValidLabelValue(l.Value); len(errs) > 0 {
				t.Errorf("%s: %s=%q: %v", name, l.Key, l.Value, errs)
			}
			if !strings.HasPrefix(l.Key, Namespace) && !strings.HasPrefix(l.Key, "nvidia.com/") {
				t.Errorf("%s: %s is outside devctl.io/ and nvidia.com/", name, l.Key)
			}
		}
	}
}

func TestGFDLabelsForNVIDIA(t *testing.T) {
	rep := reports(t)["nvidia-h100-pcie-x2.json"]
	got := map[string]string{}
	for _, l := range Labels(rep) {
		got[l.Key] = l.Value
	}
	want := map[string]string{
		"nvidia.com/gpu.product":        "NVIDIA-H100-PCIe",
		"nvidia.com/gpu.count":          "2",
		"nvidia.com/gpu.memory":         "81920",
		"nvidia.com/gpu.family":         "hopper",
		"nvidia.com/gpu.compute.major":  "9",
		"nvidia.com/gpu.compute.minor":  "0",
		"nvidia.com/cuda.driver.major":  "550",
		"nvidia.com/cuda.driver.minor":  "90",
		"nvidia.com/cuda.driver.rev":    "07",
		"nvidia.com/cuda.runtime.major": "12",
		"nvidia.com/cuda.runtime.minor": "4",
		"devctl.io/backend":             "cuda",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	for k := range got {
		if strings.HasPrefix(k, Namespace+"cuda.") {
			t.Errorf("NVIDIA facts use GFD's names, not %s", k)
		}
	}
}

func TestTPULabels(t *testing.T) {
	got := map[string]string{}
	for _, l := range Labels(reports(t)["tpu-v6e-8.json"]) {
		got[l.Key] = l.Value
	}
	for k, v := range map[string]string{"devctl.io/tpu.generation": "v6e", "devctl.io/tpu.chips": "8", "devctl.io/tpu.accelerator-type": "v6e-8", "devctl.io/backend": "xla"} {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
}

func TestFamily(t *testing.T) {
	for cc, want := range map[string]string{"7.0": "volta", "7.5": "turing", "8.0": "ampere", "8.6": "ampere", "8.9": "ada-lovelace", "9.0": "hopper", "10.0": "blackwell", "4.0": "undefined"} {
		major, minor, _ := strings.Cut(cc, ".")
		n := 0
		for _, c := range major {
			n = n*10 + int(c-'0')
		}
		if got := family(n, minor); got != want {
			t.Errorf("family(%s) = %s, want %s", cc, got, want)
		}
	}
}

func TestRender(t *testing.T) {
	got, err := Render([]Label{{"devctl.io/a", "1"}, {"nvidia.com/gpu.count", "2"}}, "v1.2.3\n# +evil", time.Date(2030, 1, 2, 3, 4, 5, 0, time.FixedZone("X", 3600)))
	if err != nil {
		t.Fatal(err)
	}
	want := "# node labels from devctl v1.2.3# +evil (devctl probe -o nfd); rewritten, do not edit\n# +expiry-time=2030-01-02T02:04:05Z\ndevctl.io/a=1\nnvidia.com/gpu.count=2\n"
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	big := make([]Label, 2000)
	for i := range big {
		big[i] = Label{Namespace + strings.Repeat("x", 40), strings.Repeat("y", 40)}
	}
	if _, err := Render(big, "v", time.Time{}); err == nil {
		t.Error("a file NFD would ignore for its size must be refused")
	}
}

func TestWriteIsAtomicThroughADotFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "devctl")
	if err := os.WriteFile(path, []byte("old=1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, []byte("devctl.io/a=1\n")); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	if string(got) != "devctl.io/a=1\n" {
		t.Errorf("content %q", got)
	}
	st, _ := os.Stat(path)
	if st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644 (nfd-worker may run as another user)", st.Mode().Perm())
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("left behind: %v", ents)
	}
	if err := Write(filepath.Join(dir, "missing", "devctl"), []byte("a/b=1\n")); err == nil {
		t.Error("a missing directory is an error")
	}
}

func TestLabelValue(t *testing.T) {
	for in, want := range map[string]string{
		"NVIDIA H100 80GB HBM3": "NVIDIA-H100-80GB-HBM3",
		"Intel(R) Xeon(R)":      "Intel-R--Xeon-R",
		"  -x- ":                "x",
		strings.Repeat("a", 70): strings.Repeat("a", 63),
		"ü":                     "",
		"gfx942":                "gfx942",
	} {
		got, ok := labelValue(in)
		if got != want || ok != (want != "") {
			t.Errorf("labelValue(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
}

func FuzzLabelValue(f *testing.F) {
	for _, s := range []string{"NVIDIA H100", "", "-", "a.b_c-d", "\x00\xff", strings.Repeat("é", 40)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, ok := labelValue(s)
		if !ok {
			return
		}
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 || v == "" {
			t.Fatalf("labelValue(%q) = %q: %v", s, v, errs)
		}
	})
}
