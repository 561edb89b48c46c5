package software

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/devctl/devctl/internal/testutil/fakehost"
)

func tree(name string) string { return filepath.Join("..", "..", "..", "testdata", "software", name) }

// envLine is what a test compares of one environment.
type envLine struct{ Prefix, Interpreter, Via string }

func TestInterpreterOnPath(t *testing.T) {
	tests := []struct {
		name string
		tree string
		env  map[string]string
		want []envLine
	}{
		{"a pyenv shim resolves to the global version in $PYENV_ROOT/version; Debian's python follows",
			"pyenv-shim", map[string]string{"PATH": "/root/.pyenv/shims:/usr/bin"},
			[]envLine{{"/root/.pyenv/versions/3.11.7", "/root/.pyenv/versions/3.11.7/bin/python3", "pyenv shim: 3.11.7 (from /root/.pyenv/version)"},
				{"/usr", "/usr/bin/python3", ""}}},
		{"a .python-version in a parent of $PWD wins, and a prefix picks the newest installed release",
			"pyenv-shim", map[string]string{"PATH": "/root/.pyenv/shims:/usr/bin", "PWD": "/home/u/proj/src/pkg"},
			[]envLine{{"/root/.pyenv/versions/3.12.1", "/root/.pyenv/versions/3.12.1/bin/python3", "pyenv shim: 3.12.1 (from /home/u/proj/.python-version)"},
				{"/usr", "/usr/bin/python3", ""}}},
		{"PYENV_VERSION wins over the files; a version not installed is skipped for the next",
			"pyenv-shim", map[string]string{"PATH": "/root/.pyenv/shims:/usr/bin", "PWD": "/home/u/proj", "PYENV_VERSION": "3.9.1:python-3.10.13"},
			[]envLine{{"/root/.pyenv/versions/3.10.13", "/root/.pyenv/versions/3.10.13/bin/python3", "pyenv shim: 3.10.13 (from PYENV_VERSION)"},
				{"/usr", "/usr/bin/python3", ""}}},
		{"pyenv's system passes through to the next python on PATH, which says so",
			"pyenv-shim", map[string]string{"PATH": "/root/.pyenv/shims:/usr/bin", "PYENV_VERSION": "system"},
			[]envLine{{"/usr", "/usr/bin/python3", "pyenv: system (from PYENV_VERSION)"}}},
		{"an asdf shim resolves through ~/.tool-versions to the asdf install (astral-sh/uv#16362)",
			"asdf-uv-venv", map[string]string{"PATH": "/Users/joel/.asdf/shims:/usr/bin", "HOME": "/Users/joel", "PWD": "/Users/joel/test-project"},
			[]envLine{{"/Users/joel/.asdf/installs/python/3.13.5", "/Users/joel/.asdf/installs/python/3.13.5/bin/python", "asdf shim: 3.13.5 (from /Users/joel/.tool-versions)"},
				{"/usr", "/usr/bin/python3", ""}}},
		{"a uv venv's bin on PATH is the venv, marked with uv's version from pyvenv.cfg",
			"asdf-uv-venv", map[string]string{"PATH": "/Users/joel/test-project/.venv/bin:/Users/joel/.asdf/shims", "HOME": "/Users/joel"},
			[]envLine{{"/Users/joel/test-project/.venv", "/Users/joel/test-project/.venv/bin/python", "uv venv (pyvenv.cfg uv = 0.9.4)"},
				{"/Users/joel/.asdf/installs/python/3.13.5", "/Users/joel/.asdf/installs/python/3.13.5/bin/python", "asdf shim: 3.13.5 (from /Users/joel/.tool-versions)"}}},
		{"uv's ~/.local/bin/python3 link leads to the uv-managed installation",
			"uv-python", map[string]string{"PATH": "/Users/lou/.local/bin:/usr/bin"},
			[]envLine{{"/Users/lou/.local/share/uv/python/cpython-3.14.2-macos-aarch64-none", "/Users/lou/.local/bin/python3",
				"uv-managed Python: /Users/lou/.local/share/uv/python/cpython-3.14.2-macos-aarch64-none/bin/python3"},
				{"/usr", "/usr/bin/python3", ""}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := fakehost.RootHost(t, tree(tt.tree), tt.env)
			sw := Collect(context.Background(), h)
			var got []envLine
			for _, e := range sw.Environments {
				got = append(got, envLine{e.Prefix, e.Interpreter, e.Via})
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("environments (-want +got)\n%s", diff)
			}
		})
	}
}

func TestInstallers(t *testing.T) {
	tests := []struct {
		name, tree, site, dist, want string
	}{
		{"pip's INSTALLER (a pyenv Python on the dev VM)", "pyenv-shim", "/root/.pyenv/versions/3.11.7/lib/python3.11/site-packages", "annotated_types-0.7.0.dist-info", "pip"},
		{"uv's INSTALLER, written without a newline", "uv-python", "/Users/lou/.local/share/uv/python/cpython-3.14.2-macos-aarch64-none/lib/python3.14/site-packages", "packaging-24.2.dist-info", "uv"},
		{"a Debian package's .dist-info has no INSTALLER: debian", "pyenv-shim", "/usr/lib/python3/dist-packages", "PyYAML-6.0.dist-info", "debian"},
		{"python3-torch's egg-info in Debian's dist-packages: debian, not pip", "pyenv-shim", "/usr/lib/python3/dist-packages", "torch-1.13.0a0+gitunknown.egg-info", "debian"},
		{"a .dist-info without INSTALLER elsewhere: unknown", "asdf-uv-venv", "/Users/joel/test-project/.venv/lib/python3.13/site-packages", "x-1.0.dist-info", "unknown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := fakehost.RootHost(t, tree(tt.tree), nil)
			if got := installerOf(h, tt.site, tt.dist); got != tt.want {
				t.Errorf("installerOf = %q, want %q", got, tt.want)
			}
		})
	}
	// Through the report: Debian's torch and numpy are not pip's.
	h := fakehost.RootHost(t, tree("pyenv-shim"), map[string]string{"PATH": "/usr/bin"})
	sw := Collect(context.Background(), h)
	var got []string
	for _, p := range sw.Environments[0].Packages {
		got = append(got, p.Name+" "+p.Installer)
	}
	if diff := cmp.Diff([]string{"numpy debian", "torch debian"}, got); diff != "" {
		t.Errorf("packages (-want +got)\n%s", diff)
	}
}

func TestParseVersionFiles(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string
	}{
		{"one version", "3.11.7\n", []string{"3.11.7"}},
		{"several lines, comments and blanks, first word of each", "# pinned\n\n3.12 extra words\r\nsystem\n", []string{"3.12", "system"}},
		{"path traversal is ignored as pyenv ignores it", "../../etc\n/usr\n3.11.7/envs/x\n", []string{"3.11.7/envs/x"}},
		{"empty", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, ParseVersionFile([]byte(tt.in))); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
	if diff := cmp.Diff([]string{"3.7.2", "2.7.15", "system"}, ParseToolVersions([]byte("ruby 2.5.3\npython 3.7.2 2.7.15 system # fallback\n"), "python")); diff != "" {
		t.Errorf("tool-versions (-want +got)\n%s", diff)
	}
	for in, want := range map[string]string{"pip\n": "pip", "uv": "uv", "  Conda \n": "conda", "": "", "rm -rf /\n": "", "pip\nextra": "pip"} {
		if got := ParseInstaller([]byte(in)); got != want {
			t.Errorf("ParseInstaller(%q) = %q, want %q", in, got, want)
		}
	}
	installed := []string{"3.10.13", "3.11.7", "3.12.0rc1", "3.12.1", "3.12.2-dev", "3.13.0", "3.13.0t"}
	has := func(v string) bool {
		for _, x := range installed {
			if x == v {
				return true
			}
		}
		return false
	}
	for in, want := range map[string]string{"3.12": "3.12.1", "python-3.11.7": "3.11.7", "3.13": "3.13.0", "3": "3.13.0", "3.9": ""} {
		if got, _ := pickPyenvVersion(in, installed, has); got != want {
			t.Errorf("pickPyenvVersion(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzParseVersionFile(f *testing.F) {
	f.Add([]byte("3.11.7\n# c\n../x\n"))
	f.Add([]byte("python 3.7.2 system\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, v := range ParseVersionFile(b) {
			if v == "" || v[0] == '/' || v == ".." {
				t.Fatalf("unsafe version %q", v)
			}
		}
		_ = ParseToolVersions(b, "python")
		_ = ParseInstaller(b)
	})
}
