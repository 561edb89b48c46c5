package doctor

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/devctl/devctl/internal/explain/i18n"
	"github.com/devctl/devctl/internal/host"
	"github.com/devctl/devctl/internal/probe/nvidia"
)

// fixtureCase is testdata/doctor/<check>/<case>/case.json: how to build the
// host around root/ and what the check must conclude.
type fixtureCase struct {
	Want         Status            `json:"want"`
	Msg          string            `json:"msg"`
	OS           string            `json:"os"`
	Arch         string            `json:"arch"`
	Env          map[string]string `json:"env"`
	UID          int               `json:"uid"`
	Groups       []string          `json:"groups"`
	Chmod        map[string]string `json:"chmod"`
	NVML         string            `json:"nvml"`          // file beside case.json
	NVMLShared   string            `json:"nvml_shared"`   // path under testdata/
	SysctlShared string            `json:"sysctl_shared"` // "key: value" lines under testdata/
	// Commands maps a program name to a file beside case.json holding its
	// output (the kernel log for kernel.device_errors).
	Commands map[string]string `json:"commands"`
}

// fileRunner answers programs from fixture files; others are not installed.
type fileRunner map[string][]byte

func (r fileRunner) Run(_ context.Context, name string, _ ...string) ([]byte, error) {
	if b, ok := r[name]; ok {
		return b, nil
	}
	return nil, host.ErrNotFound
}

func (r fileRunner) LookPath(name string) (string, error) {
	if _, ok := r[name]; ok {
		return "/usr/bin/" + name, nil
	}
	return "", host.ErrNotFound
}

const testdataDir = "../../testdata"

type mapSysctl map[string]string

func (m mapSysctl) Get(name string) (string, error) {
	if v, ok := m[name]; ok {
		return v, nil
	}
	return "", host.ErrNotFound
}

func parseSysctl(b []byte) mapSysctl {
	m := mapSysctl{}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			m[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return m
}

// copyTree copies a fixture root into dir, keeping symbolic links, so
// tests can chmod device nodes (git keeps no mode bits but the x bit).
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		out := filepath.Join(dst, rel)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, out)
		case d.IsDir():
			return os.MkdirAll(out, 0o755)
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(out, b, 0o644)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
}

// loadFixture builds the Env a case describes.
func loadFixture(t *testing.T, dir string) (*Env, fixtureCase) {
	t.Helper()
	var fc fixtureCase
	b, err := os.ReadFile(filepath.Join(dir, "case.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &fc); err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	root := t.TempDir()
	copyTree(t, filepath.Join(dir, "root"), root)
	for p, mode := range fc.Chmod {
		m, err := strconv.ParseUint(mode, 8, 32)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(filepath.Join(root, filepath.FromSlash(p)), fs.FileMode(m)); err != nil {
			t.Fatal(err)
		}
	}
	h := &host.Host{
		OS: "linux", Arch: "amd64", FS: host.DirFS(root), Env: host.MapEnv(fc.Env),
		Runner: host.NoRunner{}, Sysctl: host.NoSysctl{},
		Identity: host.Identity{UID: fc.UID, Groups: fc.Groups},
		Now:      func() time.Time { return time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC) },
	}
	if fc.OS != "" {
		h.OS = fc.OS
	}
	if len(fc.Commands) > 0 {
		r := fileRunner{}
		for prog, file := range fc.Commands {
			b, err := os.ReadFile(filepath.Join(dir, file))
			if err != nil {
				t.Fatal(err)
			}
			r[prog] = b
		}
		h.Runner = r
	}
	if fc.Arch != "" {
		h.Arch = fc.Arch
	}
	if fc.SysctlShared != "" {
		b, err := os.ReadFile(filepath.Join(testdataDir, fc.SysctlShared))
		if err != nil {
			t.Fatal(err)
		}
		h.Sysctl = parseSysctl(b)
	}
	env := &Env{Host: h}
	nvPath := ""
	switch {
	case fc.NVML != "":
		nvPath = filepath.Join(dir, fc.NVML)
	case fc.NVMLShared != "":
		nvPath = filepath.Join(testdataDir, fc.NVMLShared)
	}
	env.NVIDIAFunc = func(context.Context, *Env) (*NVState, string) {
		if nvPath == "" {
			return nil, "no NVML answers in this fixture"
		}
		b, err := os.ReadFile(nvPath)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := nvidia.Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		return FromRaw(raw), ""
	}
	return env, fc
}

var unfilled = regexp.MustCompile(`\{[a-z0-9_]+\}`)

// checkRendered holds a finding's texts in lang to the catalogue: its
// message exists, every placeholder its templates use outside a [[ ]] part
// has a value in the finding's Args, nothing looking like a placeholder
// survives rendering, and a failure or warning comes with a fix.
func checkRendered(t *testing.T, o Outcome, lang Lang) {
	t.Helper()
	f := o.Finding
	m, ok := findingMessage(o.Check.ID, f.Msg, lang)
	if !ok {
		t.Errorf("%s: no %s message for key %q", o.Check.ID, lang, f.Msg)
		return
	}
	for _, tmpl := range append([]string{m.Detail}, m.Fixes...) {
		if miss := i18n.Missing(tmpl, f.Args); len(miss) > 0 {
			t.Errorf("%s/%s in %s: the finding gives no value for %v in %q", o.Check.ID, f.Msg, lang, miss, tmpl)
		}
	}
	r := Render(o, lang)
	if u := unfilled.FindAllString(r.Detail+" "+r.Fix, -1); len(u) > 0 {
		t.Errorf("%s/%s in %s: unfilled %v in %q / %q", o.Check.ID, f.Msg, lang, u, r.Detail, r.Fix)
	}
	if r.Title == o.Check.ID {
		t.Errorf("%s: no %s title", o.Check.ID, lang)
	}
	if (r.Status == Fail || r.Status == Warn) && r.Fix == "" {
		t.Errorf("%s/%s: a %s finding without a fix in %s: %s", o.Check.ID, f.Msg, r.Status, lang, r.Detail)
	}
}

// TestFixtures runs every check against its passing and failing fixture
// trees under testdata/doctor/<check id>/<case>/.
func TestFixtures(t *testing.T) {
	checkDirs, err := os.ReadDir(filepath.Join(testdataDir, "doctor"))
	if err != nil {
		t.Fatal(err)
	}
	covered := map[string]map[Status]bool{}
	for _, cd := range checkDirs {
		if !cd.IsDir() {
			continue
		}
		c := Lookup(cd.Name())
		if c == nil {
			t.Errorf("testdata/doctor/%s: no check with that id", cd.Name())
			continue
		}
		cases, _ := os.ReadDir(filepath.Join(testdataDir, "doctor", cd.Name()))
		for _, cs := range cases {
			dir := filepath.Join(testdataDir, "doctor", cd.Name(), cs.Name())
			t.Run(cd.Name()+"/"+cs.Name(), func(t *testing.T) {
				env, fc := loadFixture(t, dir)
				o := Run(context.Background(), []*Check{c}, env, Options{Timeout: 5 * time.Second})[0]
				if o.Finding.Status != fc.Want || o.Finding.Msg != fc.Msg {
					t.Errorf("status %s msg %q, want %s %q\ndetail: %s", o.Finding.Status, o.Finding.Msg, fc.Want, fc.Msg, Render(o, English).Detail)
				}
				for _, lang := range Langs {
					checkRendered(t, o, lang)
				}
			})
			if covered[cd.Name()] == nil {
				covered[cd.Name()] = map[Status]bool{}
			}
			b, _ := os.ReadFile(filepath.Join(dir, "case.json"))
			var fc fixtureCase
			_ = json.Unmarshal(b, &fc)
			covered[cd.Name()][fc.Want] = true
		}
	}
	var missing []string
	for _, c := range All() {
		cov := covered[c.ID]
		if !cov[Pass] || !(cov[Fail] || cov[Warn]) {
			missing = append(missing, c.ID)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("checks without a passing and a failing fixture: %s", strings.Join(missing, ", "))
	}
}
