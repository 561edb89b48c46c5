// Package pcitest builds small fixture trees for driver tests: a map of
// machine paths to contents written under t.TempDir(), and a Host rooted
// there. It exists so every accelerator driver's tests build trees the
// same way and never touch real host paths.
package pcitest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/devctl/devctl/internal/host"
)

// Link marks a Files value as a symbolic link target: Files{"/a": Link("/b")}.
const linkPrefix = "\x00link:"

// Link returns a Files value that makes a symbolic link to target.
func Link(target string) string { return linkPrefix + target }

// Files maps absolute machine paths ("/sys/bus/pci/devices/.../vendor") to
// file contents, or to Link(target). A path ending in "/" is a directory.
type Files map[string]string

// Write creates the files under root.
func Write(t testing.TB, root string, files Files) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if strings.HasSuffix(name, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if target, ok := strings.CutPrefix(content, linkPrefix); ok {
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Host writes files into a new temporary directory and returns a Linux
// Host rooted there, with env as its whole environment.
func Host(t testing.TB, files Files, env map[string]string) *host.Host {
	t.Helper()
	root := t.TempDir()
	Write(t, root, files)
	return RootHost(t, root, env)
}

// RootHost returns a Linux Host rooted at an existing tree (testdata).
func RootHost(t testing.TB, root string, env map[string]string) *host.Host {
	t.Helper()
	h, err := host.Local(host.LocalOptions{Sysroot: root})
	if err != nil {
		t.Fatal(err)
	}
	if env == nil {
		env = map[string]string{}
	}
	h.Env = host.MapEnv(env)
	h.Identity = host.Identity{UID: 1000, Groups: []string{"users"}}
	return h
}

// Function returns the files of one PCI function as the kernel shows them:
// a uevent plus the separate id, link and NUMA files.
func Function(addr string, vendor, device, subVendor, subDevice uint16, class uint32, driver, speed string, width int) Files {
	dir := "/sys/bus/pci/devices/" + addr + "/"
	f := Files{
		dir + "vendor":             fmt.Sprintf("0x%04x\n", vendor),
		dir + "device":             fmt.Sprintf("0x%04x\n", device),
		dir + "subsystem_vendor":   fmt.Sprintf("0x%04x\n", subVendor),
		dir + "subsystem_device":   fmt.Sprintf("0x%04x\n", subDevice),
		dir + "class":              fmt.Sprintf("0x%06x\n", class),
		dir + "numa_node":          "-1\n",
		dir + "current_link_speed": speed + "\n",
		dir + "max_link_speed":     speed + "\n",
		dir + "current_link_width": fmt.Sprintf("%d\n", width),
		dir + "max_link_width":     fmt.Sprintf("%d\n", width),
	}
	ue := fmt.Sprintf("PCI_CLASS=%X\nPCI_ID=%04X:%04X\nPCI_SUBSYS_ID=%04X:%04X\nPCI_SLOT_NAME=%s\n",
		class, vendor, device, subVendor, subDevice, addr)
	if driver != "" {
		ue = "DRIVER=" + driver + "\n" + ue
	}
	f[dir+"uevent"] = ue
	return f
}

// Merge combines file sets; later sets win.
func Merge(sets ...Files) Files {
	out := Files{}
	for _, s := range sets {
		for k, v := range s {
			out[k] = v
		}
	}
	return out
}
