// Package fixturegen writes testdata/doctor: for every doctor check a
// passing and a failing machine, each a root/ tree plus case.json (and
// nvml.json). Real data is copied from the other fixture sets under
// testdata/; what is changed by hand is said beside it and in
// testdata/doctor/README.md. Run it with `go generate ./internal/doctor/...`
// (or `make fixtures`); TestRegeneratingChangesNothing fails when the tree
// and this code disagree.
package fixturegen

//go:generate go run ./cmd/genfixtures -testdata ../../../testdata

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/devctl/devctl/internal/testutil/fakehost"
)

// Case is one fixture: the machine's files and what case.json says.
type Case struct {
	Check, Name string
	Files       fakehost.Files
	// Meta is case.json: want, msg and how to build the host (env, os,
	// arch, uid, groups, chmod, nvml_shared, sysctl_shared).
	Meta map[string]any
	// NVML, when set, is written as nvml.json beside case.json.
	NVML any
	// Beside are other files next to case.json (dmesg.txt: a program's
	// output that case.json's "commands" names).
	Beside map[string]string
}

// Write regenerates every case under out (testdata/doctor), reading the
// real data it copies from testdata.
func Write(testdata, out string) error {
	cases, err := Cases(testdata)
	if err != nil {
		return err
	}
	for _, c := range cases {
		if err := c.write(out); err != nil {
			return fmt.Errorf("%s/%s: %w", c.Check, c.Name, err)
		}
	}
	return nil
}

func (c Case) write(out string) error {
	dir := filepath.Join(out, c.Check, c.Name)
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	root := filepath.Join(dir, "root")
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	if err := fakehost.Write(root, c.Files); err != nil {
		return err
	}
	// git keeps no empty directory: an empty machine holds a .keep file.
	if ents, err := os.ReadDir(root); err == nil && len(ents) == 0 {
		if err := os.WriteFile(filepath.Join(root, ".keep"), nil, 0o644); err != nil {
			return err
		}
	}
	meta := map[string]any{}
	for k, v := range c.Meta {
		meta[k] = v
	}
	if c.NVML != nil {
		b, err := marshal(c.NVML)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, "nvml.json"), b, 0o644); err != nil {
			return err
		}
		meta["nvml"] = "nvml.json"
	}
	for name, content := range c.Beside {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			return err
		}
	}
	b, err := marshal(meta)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "case.json"), b, 0o644)
}

// gen collects cases and the first error reading testdata.
type gen struct {
	testdata string
	cases    []Case
	err      error
}

func (g *gen) read(rel string) string {
	b, err := os.ReadFile(filepath.Join(g.testdata, filepath.FromSlash(rel)))
	if err != nil && g.err == nil {
		g.err = err
	}
	return string(b)
}

// lines returns lines from to to (1-based, inclusive) of a testdata file,
// each with its newline.
func (g *gen) lines(rel string, from, to int) string {
	all := strings.SplitAfter(g.read(rel), "\n")
	if from < 1 || to > len(all) || from > to {
		if g.err == nil {
			g.err = fmt.Errorf("%s has no lines %d-%d", rel, from, to)
		}
		return ""
	}
	return strings.Join(all[from-1:to], "")
}

func (g *gen) tree(rel, prefix string) fakehost.Files {
	f, err := fakehost.ReadTree(filepath.Join(g.testdata, filepath.FromSlash(rel)), prefix)
	if err != nil && g.err == nil {
		g.err = err
	}
	return f
}

func (g *gen) nvmlFile(rel string) *obj {
	v, err := decodeOrdered([]byte(g.read(rel)))
	if err != nil && g.err == nil {
		g.err = fmt.Errorf("%s: %w", rel, err)
	}
	x, _ := v.(*obj)
	if x == nil {
		x = o()
	}
	return x
}

// add records a case; meta holds key, value pairs for case.json beside
// want and msg.
func (g *gen) add(check, name, want, msg string, files fakehost.Files, meta ...any) *Case {
	m := map[string]any{"want": want, "msg": msg}
	for i := 0; i+1 < len(meta); i += 2 {
		m[meta[i].(string)] = meta[i+1]
	}
	if files == nil {
		files = fakehost.Files{}
	}
	g.cases = append(g.cases, Case{Check: check, Name: name, Files: files, Meta: m})
	return &g.cases[len(g.cases)-1]
}

// nvPCI is an NVIDIA function as an older kernel shows it: the uevent
// alone, and, with width, the link files.
func nvPCI(addr, dev, class, driver string, width ...int) fakehost.Files {
	var d uint64
	fmt.Sscanf(dev, "%X", &d)
	var cls uint64
	fmt.Sscanf(class, "%X", &cls)
	base := "/sys/bus/pci/devices/" + addr + "/"
	f := fakehost.Files{base + "uevent": fakehost.Uevent(addr, 0x10de, uint16(d), 0x10de, 0x134f, uint32(cls), driver)}
	if len(width) == 2 {
		f[base+"current_link_width"] = fmt.Sprintf("%d\n", width[0])
		f[base+"max_link_width"] = fmt.Sprintf("%d\n", width[1])
		f[base+"current_link_speed"] = "2.5 GT/s PCIe\n"
		f[base+"max_link_speed"] = "16.0 GT/s PCIe\n"
	}
	return f
}

func merge(sets ...fakehost.Files) fakehost.Files { return fakehost.Merge(sets...) }

func torchPy(ver, cuda string) string {
	c := "None"
	if cuda != "" {
		c = "'" + cuda + "'"
	}
	return "from typing import Optional\n\n__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip']\n__version__ = '" + ver +
		"'\ndebug = False\ncuda: Optional[str] = " + c + "\ngit_version = 'a8d6afb511a69687bbb2b7e88a3cf67917e1697e'\nhip: Optional[str] = None\n"
}

func tpuPCI() fakehost.Files {
	return fakehost.Files{"/sys/bus/pci/devices/0000:00:04.0/uevent": fakehost.Uevent("0000:00:04.0", 0x1ae0, 0x0063, 0x1ae0, 0, 0x120000, "vfio-pci")}
}

func mode(paths []string, m string) map[string]any {
	out := map[string]any{}
	for _, p := range paths {
		out[p] = m
	}
	return out
}

func env(kv ...string) map[string]any {
	out := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

// removeAVX drops every avx2/avx512/AMX flag from the flags lines: a CPU
// from before Haswell, made from a real Sapphire Rapids file (synthetic).
func removeAVX(cpuinfo string) string {
	drop := map[string]bool{"avx_vnni": true, "amx_tile": true, "amx_int8": true, "amx_bf16": true, "amx_fp16": true, "avx_vnni_int8": true}
	return regexp.MustCompile(`(?m)^flags\s*:.*$`).ReplaceAllStringFunc(cpuinfo, func(line string) string {
		var keep []string
		for _, t := range strings.Split(line, " ") {
			if !strings.HasPrefix(t, "avx2") && !strings.HasPrefix(t, "avx512") && !drop[t] {
				keep = append(keep, t)
			}
		}
		return strings.Join(keep, " ")
	})
}

// jsonCheck guards the types case.json needs: numbers stay numbers.
var _ = json.Number("")
