// Package kernfs reads the kernel's pseudo-files that several probe drivers
// share on Linux: the mount table, a process's cgroup membership, cgroup
// limit files and CPU lists. Every parser is a pure function over bytes so
// that a tree from any machine (--sysroot) parses the same on any runner;
// the Cgroups type then walks a process's cgroup up to the root, because a
// parent's limit binds a child even when the child's own file says "max".
package kernfs

import (
	"bytes"
	"strings"
)

// Mount is one line of /proc/<pid>/mountinfo (or /proc/mounts).
type Mount struct {
	// Root is the directory of the mounted file system that appears at
	// MountPoint ("/" for a whole file system; a cgroup path for a cgroup
	// bind-mounted into a container).
	Root       string
	MountPoint string
	FSType     string
	Source     string
	// Options are the per-mount options, SuperOptions the file system's
	// own ("size=65536k", the cgroup v1 controller names).
	Options      []string
	SuperOptions []string
}

// Option returns the value of a "key=value" option (or "" for a bare flag)
// from the super options first, then the mount options.
func (m Mount) Option(key string) (string, bool) {
	for _, list := range [][]string{m.SuperOptions, m.Options} {
		for _, o := range list {
			k, v, _ := strings.Cut(o, "=")
			if k == key {
				return v, true
			}
		}
	}
	return "", false
}

// ParseMountInfo parses /proc/<pid>/mountinfo. Lines that do not have the
// documented shape are skipped: a partial answer is more useful than none.
//
//	36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue
func ParseMountInfo(b []byte) []Mount {
	var out []Mount
	for _, line := range lines(b) {
		f := strings.Fields(line)
		sep := -1
		for i := 6; i < len(f); i++ {
			if f[i] == "-" {
				sep = i
				break
			}
		}
		if sep < 0 || len(f) < sep+3 {
			continue
		}
		m := Mount{
			Root:       unescapeOctal(f[3]),
			MountPoint: unescapeOctal(f[4]),
			Options:    strings.Split(f[5], ","),
			FSType:     f[sep+1],
			Source:     unescapeOctal(f[sep+2]),
		}
		if len(f) > sep+3 {
			m.SuperOptions = strings.Split(f[sep+3], ",")
		}
		out = append(out, m)
	}
	return out
}

// ParseMounts parses /proc/mounts (fstab format), the fallback when
// mountinfo is missing. Its entries have no Root; it is reported as "/".
func ParseMounts(b []byte) []Mount {
	var out []Mount
	for _, line := range lines(b) {
		f := strings.Fields(line)
		if len(f) < 4 {
			continue
		}
		opts := strings.Split(f[3], ",")
		out = append(out, Mount{
			Root:         "/",
			Source:       unescapeOctal(f[0]),
			MountPoint:   unescapeOctal(f[1]),
			FSType:       f[2],
			Options:      opts,
			SuperOptions: opts,
		})
	}
	return out
}

// FindMount returns the last mount at mountPoint (later mounts hide earlier
// ones at the same place).
func FindMount(mounts []Mount, mountPoint string) (Mount, bool) {
	for i := len(mounts) - 1; i >= 0; i-- {
		if mounts[i].MountPoint == mountPoint {
			return mounts[i], true
		}
	}
	return Mount{}, false
}

// unescapeOctal undoes the kernel's \ooo escaping of spaces, tabs, newlines
// and backslashes in mount paths.
func unescapeOctal(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && isOctal(s[i+1]) && isOctal(s[i+2]) && isOctal(s[i+3]) {
			v := (s[i+1]-'0')<<6 | (s[i+2]-'0')<<3 | (s[i+3] - '0')
			b.WriteByte(v)
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }

// lines splits b into lines without allocating a copy of b.
func lines(b []byte) []string {
	var out []string
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		var l []byte
		if i < 0 {
			l, b = b, nil
		} else {
			l, b = b[:i], b[i+1:]
		}
		if len(bytes.TrimSpace(l)) > 0 {
			out = append(out, string(l))
		}
	}
	return out
}
