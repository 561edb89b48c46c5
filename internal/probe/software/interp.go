package software

import (
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/devctl/devctl/internal/host"
)

// Version managers put shims on PATH: small scripts that pick a Python by
// the directory the user is in. devctl resolves a shim to the interpreter
// the manager would run, by the manager's own rules, without running it.

// maxVersionFile bounds a .python-version or .tool-versions read.
const maxVersionFile = 64 << 10

// maxUpward bounds how many parent directories are searched for a version
// file.
const maxUpward = 64

// interpreter is what a PATH entry resolves to.
type interpreter struct {
	// path is the interpreter to run; prefix its installation.
	path, prefix string
	// via says how it was found ("pyenv shim: 3.11.7 from /root/.pyenv/version").
	via string
	// system: the manager passes through to the system Python (the next
	// python3 on PATH); skip is set with it.
	system bool
}

// exe returns dir/python3 or dir/python, whichever exists.
func exe(h *host.Host, dir string) string {
	for _, n := range []string{"python3", "python"} {
		if h.Exists(dir + "/" + n) {
			return dir + "/" + n
		}
	}
	return ""
}

// resolvePathEntry decides what the python in dir (a PATH entry) runs: a
// pyenv or asdf shim resolves to the version the manager selects; a
// symbolic link (uv's ~/.local/bin/python3.12, Homebrew) to the
// installation it points into; a venv's bin/ stays the venv.
func resolvePathEntry(h *host.Host, dir string) (interpreter, bool) {
	py := exe(h, dir)
	if py == "" {
		return interpreter{}, false
	}
	parent := path.Dir(dir)
	if root, ok := pyenvRoot(h, dir); ok {
		return resolvePyenv(h, root, path.Base(py))
	}
	if root, ok := asdfRoot(h, dir); ok {
		return resolveAsdf(h, root, path.Base(py))
	}
	if h.Exists(parent + "/pyvenv.cfg") {
		it := interpreter{path: py, prefix: parent}
		if uv := pyvenvUV(h, parent); uv != "" {
			it.via = "uv venv (pyvenv.cfg uv = " + uv + ")"
		}
		return it, true
	}
	if target, ok := followLinks(h, py); ok && path.Dir(target) != dir {
		prefix := path.Dir(path.Dir(target))
		it := interpreter{path: py, prefix: prefix, via: "symlink to " + target}
		if strings.Contains(target, "/uv/python/") {
			it.via = "uv-managed Python: " + target
		}
		return it, true
	}
	prefix := parent
	if prefix == "/" {
		// /bin is /usr/bin on merged-/usr systems: one installation.
		prefix = "/usr"
	}
	return interpreter{path: py, prefix: prefix}, true
}

// followLinks resolves a chain of symbolic links (at most 8), relative
// targets against the link's directory.
func followLinks(h *host.Host, p string) (string, bool) {
	moved := false
	for range 8 {
		t, err := h.FS.Readlink(p)
		if err != nil || t == "" {
			break
		}
		if !strings.HasPrefix(t, "/") {
			t = path.Join(path.Dir(p), t)
		}
		p, moved = path.Clean(t), true
	}
	return p, moved
}

// pyvenvUV returns the uv version a pyvenv.cfg records ("uv = 0.4.18"), or "".
func pyvenvUV(h *host.Host, prefix string) string {
	b, err := h.FS.ReadFile(prefix + "/pyvenv.cfg")
	if err != nil || len(b) > maxVersionFile {
		return ""
	}
	for _, l := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(l, "=")
		if ok && strings.TrimSpace(k) == "uv" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// ---------------------------------------------------------------- pyenv

// pyenvRoot reports whether dir is pyenv's shims directory, and pyenv's
// root: $PYENV_ROOT when it owns dir, else dir's parent when it holds
// versions/ (pyenv's layout: $PYENV_ROOT/{shims,versions,version}).
func pyenvRoot(h *host.Host, dir string) (string, bool) {
	if path.Base(dir) != "shims" {
		return "", false
	}
	root := path.Dir(dir)
	if r, ok := h.LookupEnv("PYENV_ROOT"); ok && path.Clean(r) == root {
		return root, true
	}
	if h.Exists(root+"/versions") && (h.Exists(root+"/libexec/pyenv") || h.Exists(root+"/version") || h.Exists(root+"/bin/pyenv")) {
		return root, true
	}
	return "", false
}

// resolvePyenv picks the version as pyenv-version-name does (pyenv
// 2.6.30, github.com/pyenv/pyenv libexec/pyenv-version-{name,file,file-read}):
// $PYENV_VERSION (versions separated by ":"), else the first
// .python-version found from $PYENV_DIR, then $PWD, upwards, else
// $PYENV_ROOT/version; each listed version in order, the first that is
// installed and has the command wins ("python-" prefixes dropped, a
// prefix such as "3.11" meaning the newest 3.11.x installed); "system" (or
// nothing) passes through to the system Python.
func resolvePyenv(h *host.Host, root, cmd string) (interpreter, bool) {
	var names []string
	origin := ""
	if v, ok := h.LookupEnv("PYENV_VERSION"); ok && strings.TrimSpace(v) != "" {
		names, origin = strings.Split(strings.TrimSpace(v), ":"), "PYENV_VERSION"
	} else {
		file := ""
		for _, start := range []string{h.Getenv("PYENV_DIR"), h.Getenv("PWD")} {
			if file = findUpward(h, start, ".python-version"); file != "" {
				break
			}
		}
		if file == "" {
			file = root + "/version"
		}
		if b, err := h.FS.ReadFile(file); err == nil && len(b) <= maxVersionFile {
			names, origin = ParseVersionFile(b), file
		}
	}
	installed := listDirs(h, root+"/versions")
	for _, n := range names {
		if n == "system" {
			return interpreter{system: true, via: "pyenv: system (from " + origin + ")"}, false
		}
		v, ok := pickPyenvVersion(n, installed, func(v string) bool { return h.Exists(root + "/versions/" + v) })
		if !ok {
			continue
		}
		prefix := root + "/versions/" + v
		// pyenv-which skips a version that lacks the command.
		if h.Exists(prefix + "/bin/" + cmd) {
			return interpreter{path: prefix + "/bin/" + cmd, prefix: prefix, via: "pyenv shim: " + v + " (from " + originWord(origin) + ")"}, true
		}
	}
	return interpreter{system: true, via: "pyenv: no installed version selected (" + originWord(origin) + "): system"}, false
}

func cmdOr(h *host.Host, prefix, cmd string) string {
	if h.Exists(prefix + "/bin/" + cmd) {
		return cmd
	}
	return path.Base(exe(h, prefix+"/bin"))
}

func originWord(o string) string {
	if o == "" {
		return "no version set"
	}
	return o
}

// pickPyenvVersion maps one listed version to an installed one: itself,
// without a "python-" prefix, or the newest installed release with it as
// a prefix (pyenv-latest: "3.11" is the newest "3.11.x" or "3.11-..."
// that is not -dev, -src, -latest, a pre-release (a/b/rc) or a
// free-threaded "t" build).
func pickPyenvVersion(name string, installed []string, has func(string) bool) (string, bool) {
	norm := strings.TrimPrefix(name, "python-")
	for _, v := range []string{name, norm} {
		if has(v) {
			return v, true
		}
	}
	best, bestKey := "", []int(nil)
	for _, v := range installed {
		if !strings.HasPrefix(v, norm) || len(v) == len(norm) || (v[len(norm)] != '.' && v[len(norm)] != '-') {
			continue
		}
		if prerelease(v) {
			continue
		}
		if k := versionKey(v); best == "" || lessKey(bestKey, k) {
			best, bestKey = v, k
		}
	}
	return best, best != ""
}

func prerelease(v string) bool {
	for _, s := range []string{"-dev", "-src", "-latest"} {
		if strings.HasSuffix(v, s) {
			return true
		}
	}
	if strings.HasSuffix(v, "t") && len(v) > 1 && v[len(v)-2] >= '0' && v[len(v)-2] <= '9' {
		return true
	}
	i := len(v)
	for i > 0 && v[i-1] >= '0' && v[i-1] <= '9' {
		i--
	}
	if i == len(v) {
		return false
	}
	for _, s := range []string{"a", "b", "rc"} {
		if strings.HasSuffix(v[:i], s) && i-len(s) > 0 {
			c := v[i-len(s)-1]
			if c >= '0' && c <= '9' {
				return true
			}
		}
	}
	return false
}

// versionKey is the numeric parts of a version, for ordering.
func versionKey(v string) []int {
	var out []int
	for _, f := range strings.FieldsFunc(v, func(r rune) bool { return r < '0' || r > '9' }) {
		n, _ := strconv.Atoi(f)
		out = append(out, n)
	}
	return out
}

func lessKey(a, b []int) bool {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return len(a) < len(b)
}

// ParseVersionFile reads a .python-version (or pyenv's version) file as
// pyenv-version-file-read does: the first word of each line, skipping
// empty lines and # comments; a version that climbs out of the versions
// directory ("..", an absolute path) is ignored, as pyenv ignores it
// (CVE-2022-35861).
func ParseVersionFile(b []byte) []string {
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if len(line) > 1024 {
			line = line[:1024]
		}
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		v := f[0]
		if strings.HasPrefix(v, "/") || v == ".." || strings.HasPrefix(v, "../") || strings.Contains(v, "/../") || strings.HasSuffix(v, "/..") {
			continue
		}
		out = append(out, v)
		if len(out) >= 16 {
			break
		}
	}
	return out
}

// findUpward returns the first dir/name found from start up to /, or "".
func findUpward(h *host.Host, start, name string) string {
	if !strings.HasPrefix(start, "/") {
		return ""
	}
	dir := path.Clean(start)
	for range maxUpward {
		p := path.Join(dir, name)
		if st, err := h.FS.Stat(p); err == nil && !st.IsDir() {
			return p
		}
		if dir == "/" {
			break
		}
		dir = path.Dir(dir)
	}
	return ""
}

// listDirs returns the sorted names of dir's entries.
func listDirs(h *host.Host, dir string) []string {
	ents, err := h.FS.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for i, e := range ents {
		if i >= maxEntries {
			break
		}
		out = append(out, e.Name())
	}
	sort.Strings(out)
	return out
}

// ---------------------------------------------------------------- asdf

// asdfRoot reports whether dir is asdf's shims directory
// ($ASDF_DATA_DIR/shims, default ~/.asdf/shims) and returns the data dir.
func asdfRoot(h *host.Host, dir string) (string, bool) {
	if path.Base(dir) != "shims" {
		return "", false
	}
	root := path.Dir(dir)
	if r, ok := h.LookupEnv("ASDF_DATA_DIR"); ok && path.Clean(r) == root {
		return root, true
	}
	if h.Exists(root + "/installs") {
		return root, true
	}
	return "", false
}

// resolveAsdf picks the python version as asdf's documentation says
// (asdf-vm/asdf docs/manage/configuration.md and versions.md):
// $ASDF_PYTHON_VERSION, else the python line of the first .tool-versions
// from $PWD upwards, else $HOME/.tool-versions. A line lists fallbacks
// ("python 3.7.2 2.7.15 system"); the first installed one
// ($ASDF_DATA_DIR/installs/python/<version>) wins, "path:DIR" names a
// custom build, "system" passes through to the system Python.
func resolveAsdf(h *host.Host, root, cmd string) (interpreter, bool) {
	var names []string
	origin := ""
	if v, ok := h.LookupEnv("ASDF_PYTHON_VERSION"); ok && strings.TrimSpace(v) != "" {
		names, origin = strings.Fields(v), "ASDF_PYTHON_VERSION"
	} else {
		for _, file := range []string{findUpward(h, h.Getenv("PWD"), ".tool-versions"), homeFile(h, ".tool-versions")} {
			if file == "" {
				continue
			}
			b, err := h.FS.ReadFile(file)
			if err != nil || len(b) > maxVersionFile {
				continue
			}
			if vs := ParseToolVersions(b, "python"); len(vs) > 0 {
				names, origin = vs, file
				break
			}
		}
	}
	for _, n := range names {
		if n == "system" {
			return interpreter{system: true, via: "asdf: system (from " + origin + ")"}, false
		}
		prefix := root + "/installs/python/" + n
		if p, ok := strings.CutPrefix(n, "path:"); ok {
			prefix = path.Clean(p)
		}
		if py := exe(h, prefix+"/bin"); py != "" {
			return interpreter{path: prefix + "/bin/" + cmdOr(h, prefix, cmd), prefix: prefix, via: "asdf shim: " + n + " (from " + origin + ")"}, true
		}
	}
	return interpreter{system: true, via: "asdf: no installed python version selected (" + originWord(origin) + ")"}, false
}

func homeFile(h *host.Host, name string) string {
	home := h.Getenv("HOME")
	if !strings.HasPrefix(home, "/") {
		return ""
	}
	p := path.Join(home, name)
	if h.Exists(p) {
		return p
	}
	return ""
}

// ParseToolVersions returns the versions an asdf .tool-versions file lists
// for tool ("python 3.11.7 system # comment"), in order.
func ParseToolVersions(b []byte, tool string) []string {
	for _, line := range strings.Split(string(b), "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		if len(f) < 2 || f[0] != tool {
			continue
		}
		if len(f) > 17 {
			f = f[:17]
		}
		return f[1:]
	}
	return nil
}
