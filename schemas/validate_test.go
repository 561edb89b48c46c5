package schemas_test

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"sigs.k8s.io/yaml"

	"github.com/devctl/devctl/configs"
	"github.com/devctl/devctl/internal/cmd/root"
	"github.com/devctl/devctl/internal/devmem"
	"github.com/devctl/devctl/internal/history"
	"github.com/devctl/devctl/internal/iostreams"
	"github.com/devctl/devctl/internal/supervise"
	"github.com/devctl/devctl/schemas"
)

// The tests here validate REAL outputs, made by running devctl on every
// fixture host and snapshot in testdata/, against the published schemas
// with a real 2020-12 validator. A field added, renamed or retyped in any
// output without its schema fails here.

const testdata = "../testdata"

func compile(t *testing.T, name string) *jsonschema.Schema {
	t.Helper()
	raw, err := schemas.Get(name)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("schema %s is not JSON: %v", name, err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(schemas.ID(name), doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(schemas.ID(name))
	if err != nil {
		t.Fatalf("schema %s does not compile: %v", name, err)
	}
	return s
}

// validateYAML checks a -o yaml output against the same schema as JSON.
func validateYAML(t *testing.T, s *jsonschema.Schema, what string, out []byte) {
	t.Helper()
	j, err := yaml.YAMLToJSON(out)
	if err != nil {
		t.Fatalf("%s: output is not YAML: %v\n%s", what, err, out)
	}
	validate(t, s, what, j)
}

func validate(t *testing.T, s *jsonschema.Schema, what string, out []byte) {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(out))
	if err != nil {
		t.Fatalf("%s: output is not JSON: %v\n%s", what, err, out)
	}
	if err := s.Validate(inst); err != nil {
		t.Errorf("%s: output does not match its schema:\n%v", what, err)
	}
}

// devctl runs the CLI in-process and returns stdout; exit codes 0 and 3
// (findings) are both outputs worth validating.
func devctl(t *testing.T, env map[string]string, args ...string) []byte {
	t.Helper()
	out, code, errOut := try(env, args...)
	if code != 0 && code != 3 {
		t.Fatalf("devctl %s: exit %d: %s", strings.Join(args, " "), code, errOut)
	}
	return out
}

func try(env map[string]string, args ...string) (stdout []byte, code int, stderr string) {
	io, _, out, errOut := iostreams.Test()
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	code = root.Main(args, io, lookup)
	return out.Bytes(), code, errOut.String()
}

func testEnv(t *testing.T) map[string]string {
	return map[string]string{
		"XDG_CONFIG_HOME": t.TempDir(), "XDG_STATE_HOME": t.TempDir(), "NO_COLOR": "1",
		"PATH": os.Getenv("PATH"),
	}
}

func glob(t *testing.T, pattern string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(testdata, pattern))
	if err != nil || len(m) == 0 {
		t.Fatalf("no fixtures match %s (%v)", pattern, err)
	}
	return m
}

func dirs(t *testing.T, pattern string) []string {
	var out []string
	for _, p := range glob(t, pattern) {
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			out = append(out, p)
		}
	}
	return out
}

// isTree reports whether dir holds a machine tree --sysroot accepts (some
// fixtures describe a Mac, whose facts come from programs, not files).
func isTree(dir string) bool {
	for _, sub := range []string{"proc", "sys"} {
		if st, err := os.Stat(filepath.Join(dir, sub)); err == nil && st.IsDir() {
			return true
		}
	}
	return false
}

func TestSchemasCompile(t *testing.T) {
	for _, n := range schemas.Names() {
		compile(t, n)
	}
	if _, err := schemas.Get("nope"); err == nil {
		t.Error("an unknown schema name is an error")
	}
}

func TestProbeOutputsMatchSchema(t *testing.T) {
	s := compile(t, "probe")
	env := testEnv(t)
	for _, snap := range glob(t, "snapshots/*.tar.gz") {
		validate(t, s, "probe --from "+filepath.Base(snap), devctl(t, env, "--from", snap, "probe", "-o", "json"))
		y := devctl(t, env, "--from", snap, "probe", "-o", "yaml")
		j, err := yaml.YAMLToJSON(y)
		if err != nil {
			t.Fatalf("probe -o yaml --from %s: %v", snap, err)
		}
		validate(t, s, "probe -o yaml --from "+filepath.Base(snap), j)
	}
	for _, host := range append(dirs(t, "hosts/*"), dirs(t, "accel/*")...) {
		if !isTree(host) {
			continue
		}
		validate(t, s, "probe --sysroot "+host, devctl(t, env, "--sysroot", host, "probe", "-o", "json"))
	}
}

func TestDoctorOutputsMatchSchema(t *testing.T) {
	s := compile(t, "doctor")
	env := testEnv(t)
	for _, snap := range glob(t, "snapshots/*.tar.gz") {
		validate(t, s, "doctor --from "+filepath.Base(snap), devctl(t, env, "--from", snap, "doctor", "-o", "json"))
		validateYAML(t, s, "doctor -o yaml --from "+filepath.Base(snap), devctl(t, env, "--from", snap, "doctor", "-o", "yaml"))
	}
	for _, root := range glob(t, "doctor/*/*/root") {
		check := filepath.Base(filepath.Dir(filepath.Dir(root)))
		if !isTree(root) {
			continue
		}
		validate(t, s, "doctor --check "+check+" on "+root, devctl(t, env, "--sysroot", root, "doctor", "--check", check, "-o", "json"))
	}
	// Logs: one of each category, and an out-of-memory log with a plan.
	for _, dir := range dirs(t, "logs/*") {
		logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
		if len(logs) == 0 {
			continue
		}
		args := []string{"doctor", "--log", logs[0], "-o", "json"}
		if strings.Contains(dir, "out_of_memory") {
			args = append(args, "--model-params", "7B")
		}
		validate(t, s, "doctor --log "+logs[0], devctl(t, env, args...))
	}
	// The self-test: a fake interpreter that passes one operation and
	// leaves another unfinished at the time limit, and Debian's real
	// python3-torch when it is installed.
	if runtime.GOOS != "windows" {
		py := filepath.Join(t.TempDir(), "python3")
		fake := "#!/bin/sh\nm='@@devctl-selftest@@ '\nprintf '%s%s\\n' \"$m\" '{\"ev\":\"start\",\"python\":\"3.12.1\"}'\n" +
			"[ \"$4\" = torch ] || { printf '%s%s\\n' \"$m\" '{\"ev\":\"absent\"}' \"$m\" '{\"ev\":\"done\"}'; exit 0; }\n" +
			"printf '%s%s\\n' \"$m\" '{\"ev\":\"import_begin\"}' \"$m\" '{\"ev\":\"import_ms\",\"ms\":5}' \"$m\" '{\"ev\":\"import\",\"version\":\"2.4.1\"}'\n" +
			"printf '%s%s\\n' \"$m\" '{\"ev\":\"device\",\"device\":\"cuda:0\",\"backend\":\"cuda\",\"name\":\"T4\",\"precisions\":[\"fp32\"]}'\n" +
			"printf '%s%s\\n' \"$m\" '{\"ev\":\"op\",\"device\":\"cuda:0\",\"op\":\"matmul\",\"precision\":\"fp32\",\"ok\":false,\"ms\":1,\"error\":\"RuntimeError: CUDA out of memory.\"}'\n" +
			"printf '%s%s\\n' \"$m\" '{\"ev\":\"op_begin\",\"device\":\"cuda:0\",\"op\":\"conv1d\",\"precision\":\"fp32\"}'\nexec sleep 30\n"
		if err := os.WriteFile(py, []byte(fake), 0o755); err != nil {
			t.Fatal(err)
		}
		out := devctl(t, env, "doctor", "--selftest", "--python", py, "--selftest-timeout", "1s", "--check", "cpu.avx2", "-o", "json")
		if !strings.Contains(string(out), `"unfinished"`) {
			t.Errorf("the fake self-test left nothing unfinished:\n%s", out)
		}
		validate(t, s, "doctor --selftest (fake python)", out)
		if _, err := os.Stat("/usr/lib/python3/dist-packages/torch/__init__.py"); err == nil {
			validate(t, s, "doctor --selftest (Debian python3-torch)", devctl(t, env, "doctor", "--selftest", "--python", "/usr/bin/python3", "--selftest-timeout", "60s", "--check", "cpu.avx2", "-o", "json"))
		}
	}
}

// catalogued lists the names in a catalogue YAML ("  - name: x").
func catalogued(yamlText []byte) []string {
	var names []string
	for _, m := range regexp.MustCompile(`(?m)^  - name: *([^\s#]+)`).FindAllSubmatch(yamlText, -1) {
		names = append(names, string(m[1]))
	}
	return names
}

func TestRecommendOutputsMatchSchema(t *testing.T) {
	s := compile(t, "recommend")
	env := testEnv(t)
	models, devices := catalogued(configs.ModelsYAML), catalogued(configs.DevicesYAML)
	if len(models) < 5 || len(devices) < 5 {
		t.Fatalf("catalogues look empty: %d models, %d devices", len(models), len(devices))
	}
	for _, m := range models {
		for _, mode := range []string{"inference", "training", "qlora"} {
			validate(t, s, "recommend "+m+" "+mode, devctl(t, env, "recommend", "--model", m, "--mode", mode, "--device", "a100-80gb", "-o", "json"))
		}
	}
	for _, d := range devices {
		validate(t, s, "recommend on "+d, devctl(t, env, "recommend", "--model", "llama-2-7b", "--mode", "training", "--device", d, "-o", "json"))
		validateYAML(t, s, "recommend -o yaml on "+d, devctl(t, env, "recommend", "--model", "llama-2-7b", "--mode", "training", "--device", d, "-o", "yaml"))
	}
	ran := 0
	for _, snap := range glob(t, "snapshots/*.tar.gz") {
		// A snapshot with no usable device (a driver mismatch) has no
		// recommendation to validate: exit 1 with a message.
		if out, code, _ := try(env, "--from", snap, "recommend", "--model-params", "1.3B", "-o", "json"); code != 1 {
			validate(t, s, "recommend --from "+snap, out)
			ran++
		}
	}
	if ran < 10 {
		t.Errorf("only %d snapshots gave a recommendation", ran)
	}
	for _, cfg := range glob(t, "models/*.config.json") {
		// Malformed and unsupported configs are refused (exit 2): nothing to validate.
		if out, code, _ := try(env, "recommend", "--model-config", cfg, "--device", "l4", "-o", "json"); code != 2 {
			validate(t, s, "recommend --model-config "+cfg, out)
		}
	}
}

func TestBenchOutputMatchesSchema(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the benchmark for a moment")
	}
	s := compile(t, "bench")
	env := testEnv(t)
	validate(t, s, "bench", devctl(t, env, "bench", "--suite", "cpu,memory", "--duration", "300ms", "--threads", "1", "-q", "-o", "json"))
	validate(t, s, "bench --compare", devctl(t, env, "bench", "--suite", "cpu", "--duration", "200ms", "--threads", "1", "-q", "--compare", "-o", "json"))
	validateYAML(t, s, "bench -o yaml", devctl(t, env, "bench", "--suite", "cpu", "--duration", "200ms", "--threads", "1", "-q", "-o", "yaml"))
}

func TestSnapshotManifestsMatchSchema(t *testing.T) {
	s := compile(t, "snapshot-manifest")
	snaps := glob(t, "snapshots/*.tar.gz")
	// And one made now, from a fixture tree.
	fresh := filepath.Join(t.TempDir(), "fresh.tar.gz")
	devctl(t, testEnv(t), "--sysroot", filepath.Join(testdata, "hosts", "ci-vm-amd64"), "snapshot", "-o", fresh)
	for _, snap := range append(snaps, fresh) {
		validate(t, s, "manifest of "+filepath.Base(snap), manifest(t, snap))
	}
}

func manifest(t *testing.T, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			t.Fatalf("%s has no manifest.json", path)
		}
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Base(h.Name) == "manifest.json" {
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
	}
}

func TestHistoryRecordsMatchSchema(t *testing.T) {
	s := compile(t, "history")
	env := testEnv(t)
	for _, dir := range dirs(t, "logs/*") {
		logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
		if len(logs) > 0 {
			devctl(t, env, "doctor", "--log", logs[0], "--record", "-o", "json")
		}
	}
	devctl(t, env, "doctor", "--record-success", "--device", "cpu")
	f, err := os.Open(filepath.Join(env["XDG_STATE_HOME"], "devctl", "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	for sc := bufio.NewScanner(f); sc.Scan(); n++ {
		validate(t, s, "history line", sc.Bytes())
	}
	if n < 3 {
		t.Fatalf("only %d history records were written", n)
	}
	report := compile(t, "history-report")
	validate(t, report, "history -o json", devctl(t, env, "history", "-o", "json"))
	validateYAML(t, report, "history -o yaml", devctl(t, env, "history", "-o", "yaml"))
	validate(t, report, "history --device cpu -o json", devctl(t, env, "history", "--device", "cpu", "-o", "json"))
}

func TestRunReportAndHistoryMatchSchema(t *testing.T) {
	env := testEnv(t)
	// This machine's CPU: a --sysroot replay records no history.
	rep := filepath.Join(t.TempDir(), "run.json")
	devctl(t, env, "run", "--device", "cpu", "--operation", "schema-test", "--report", rep, "--", "true")
	if _, code, errOut := try(env, "run", "--device", "cpu", "--report", rep, "--", "false"); code != 1 {
		t.Fatalf("devctl run -- false: exit %d: %s", code, errOut)
	}
	data, err := os.ReadFile(rep)
	if err != nil {
		t.Fatal(err)
	}
	validate(t, compile(t, "run-report"), "run --report", data)
	validate(t, compile(t, "history-report"), "history -o json", devctl(t, env, "history", "-o", "json"))
	f, err := os.Open(filepath.Join(env["XDG_STATE_HOME"], "devctl", "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := compile(t, "history")
	lines := 0
	for sc := bufio.NewScanner(f); sc.Scan(); lines++ {
		validate(t, s, "history line of devctl run", sc.Bytes())
	}
	if lines != 2 {
		t.Errorf("%d history lines, want the 2 attempts", lines)
	}
	// A measured attempt (a CPU run measures nothing): the record and the
	// report attempt as devctl writes them.
	mem := &devmem.Measurement{PeakBytes: 2013265920, TotalPeakBytes: 2013265920, Devices: 1, Method: devmem.MethodSMI, Samples: 37, IntervalMS: 1000,
		Plan: &devmem.Estimate{Bytes: 1965073580, Model: "gpt2", Params: 1_000_000_000, Mode: "inference", Precision: "fp16", Batch: 4, BatchGiven: true, Devices: 2}}
	rec, _ := json.Marshal(history.Record{V: history.SchemaVersion, Time: time.Now().UTC(), Machine: "0123456789abcdef", Device: "cuda", Operation: "train",
		Source: history.SourceRun, Category: "other", MessageID: "other.gpu_lost", Outcome: history.Failure, Run: "abc", Attempt: 1, DurationMS: 5, Memory: mem})
	validate(t, s, "a measured history record", rec)
	r, _ := json.Marshal(supervise.Report{Command: "python", Operation: "train", Retries: 1, Outcome: history.Success,
		Attempts: []supervise.Attempt{{Attempt: 1, Time: time.Now().UTC(), Device: "cuda:0,1", Outcome: history.Success, Memory: mem}}})
	validate(t, compile(t, "run-report"), "a measured run report", r)
}
