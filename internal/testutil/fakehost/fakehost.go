// Package fakehost is the one way devctl's tests and fixture generators
// build a fake machine: a map of machine paths to contents (Files), written
// as a real tree under a directory, and a Host rooted there. Driver tests,
// doctor's fixture generator and the snapshot tests all use it, so a fake
// /sys reads the same whoever builds it.
package fakehost

import (
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
)

const linkPrefix = "\x00link:"

// Link returns a Files value that makes a symbolic link to target.
func Link(target string) string { return linkPrefix + target }

// Files maps absolute machine paths ("/sys/bus/pci/devices/.../vendor") to
// file contents, or to Link(target). A path ending in "/" is a directory.
type Files map[string]string

// Write creates the files under root.
func Write(root string, files Files) error {
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if strings.HasSuffix(name, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				return err
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if target, ok := strings.CutPrefix(content, linkPrefix); ok {
			if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
				return err
			}
			if err := os.Symlink(target, p); err != nil {
				return err
			}
			continue
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// ReadTree reads a directory tree (a real machine's fixture) as Files
// rooted at prefix: regular files by content, symbolic links as Link.
func ReadTree(dir, prefix string) (Files, error) {
	out := Files{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		name := strings.TrimSuffix(prefix, "/") + "/" + filepath.ToSlash(rel)
		if d.Type()&fs.ModeSymlink != 0 {
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			out[name] = Link(target)
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out[name] = string(b)
		return nil
	})
	return out, err
}

// Merge combines file sets; later sets win.
func Merge(sets ...Files) Files {
	out := Files{}
	for _, s := range sets {
		maps.Copy(out, s)
	}
	return out
}

// PCIFunction returns the files of one PCI function as the kernel shows
// them: a uevent plus the separate id, link and NUMA files.
func PCIFunction(addr string, vendor, device, subVendor, subDevice uint16, class uint32, driver, speed string, width int) Files {
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
	f[dir+"uevent"] = Uevent(addr, vendor, device, subVendor, subDevice, class, driver)
	return f
}

// Uevent is a PCI function's uevent file: the ids, class and bound driver
// in one place (older fixtures carry only this file).
func Uevent(addr string, vendor, device, subVendor, subDevice uint16, class uint32, driver string) string {
	ue := fmt.Sprintf("PCI_CLASS=%X\nPCI_ID=%04X:%04X\nPCI_SUBSYS_ID=%04X:%04X\nPCI_SLOT_NAME=%s\n",
		class, vendor, device, subVendor, subDevice, addr)
	if driver != "" {
		ue = "DRIVER=" + driver + "\n" + ue
	}
	return ue
}
