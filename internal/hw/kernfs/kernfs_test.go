package kernfs

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/devctl/devctl/internal/host"
)

func fixture(name string) host.FS {
	return host.DirFS(filepath.Join("..", "..", "..", "testdata", "hosts", name))
}

func TestParseMountInfo(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []Mount
	}{
		{
			name: "a tmpfs at /dev/shm keeps its size option",
			in:   "25 24 0:23 / /dev/shm rw,nosuid,nodev shared:9 - tmpfs tmpfs rw,size=65536k,inode64\n",
			want: []Mount{{Root: "/", MountPoint: "/dev/shm", FSType: "tmpfs", Source: "tmpfs",
				Options: []string{"rw", "nosuid", "nodev"}, SuperOptions: []string{"rw", "size=65536k", "inode64"}}},
		},
		{
			name: "a container's cgroup mount has the container's cgroup as root",
			in:   "35 26 0:33 /docker/abc /sys/fs/cgroup/memory ro,nosuid master:12 - cgroup cgroup rw,memory\n",
			want: []Mount{{Root: "/docker/abc", MountPoint: "/sys/fs/cgroup/memory", FSType: "cgroup", Source: "cgroup",
				Options: []string{"ro", "nosuid"}, SuperOptions: []string{"rw", "memory"}}},
		},
		{
			name: "escaped spaces in a mount point are decoded",
			in:   `40 1 0:40 / /mnt/my\040disk rw - ext4 /dev/sdb1 rw` + "\n",
			want: []Mount{{Root: "/", MountPoint: "/mnt/my disk", FSType: "ext4", Source: "/dev/sdb1",
				Options: []string{"rw"}, SuperOptions: []string{"rw"}}},
		},
		{
			name: "lines without the separator are skipped",
			in:   "garbage\n1 2 3\n25 24 0:23 / /x rw no-separator-here tmpfs\n",
			want: nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ParseMountInfo([]byte(tt.in))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseMountInfo (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseMounts(t *testing.T) {
	got := ParseMounts([]byte("shm /dev/shm tmpfs rw,nosuid,size=65536k 0 0\nshort line\n"))
	want := []Mount{{Root: "/", MountPoint: "/dev/shm", FSType: "tmpfs", Source: "shm",
		Options: []string{"rw", "nosuid", "size=65536k"}, SuperOptions: []string{"rw", "nosuid", "size=65536k"}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ParseMounts (-want +got):\n%s", diff)
	}
	if v, ok := got[0].Option("size"); !ok || v != "65536k" {
		t.Errorf("Option(size) = %q, %v; want 65536k, true", v, ok)
	}
}

func TestParseProcCgroup(t *testing.T) {
	in := "12:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n1:name=systemd:/init.scope\n0::/user.slice\nbad line\nx:y:z\n"
	want := []ProcCgroup{
		{ID: 12, Controllers: []string{"memory"}, Path: "/docker/abc"},
		{ID: 4, Controllers: []string{"cpu", "cpuacct"}, Path: "/docker/abc"},
		{ID: 1, Controllers: []string{"name=systemd"}, Path: "/init.scope"},
		{ID: 0, Path: "/user.slice"},
	}
	if diff := cmp.Diff(want, ParseProcCgroup([]byte(in))); diff != "" {
		t.Errorf("ParseProcCgroup (-want +got):\n%s", diff)
	}
}

func TestParseCPUMax(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		cpus    float64
		limited bool
		wantErr bool
	}{
		{"max means no limit", "max 100000\n", 0, false, false},
		{"a quota of one and a half periods is 1.5 CPUs", "150000 100000\n", 1.5, true, false},
		{"a quota alone uses the default period", "50000", 0.5, true, false},
		{"a zero period is malformed", "100 0", 0, false, true},
		{"words are malformed", "lots of cpus", 0, false, true},
		{"an empty file is malformed", "", 0, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cpus, limited, err := ParseCPUMax([]byte(tt.in))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if err != nil && !errors.Is(err, ErrMalformed) {
				t.Errorf("err = %v, want ErrMalformed", err)
			}
			if cpus != tt.cpus || limited != tt.limited {
				t.Errorf("got %v, %v; want %v, %v", cpus, limited, tt.cpus, tt.limited)
			}
		})
	}
}

func TestParseCFSQuota(t *testing.T) {
	tests := []struct {
		name           string
		quota, period  string
		cpus           float64
		limited, isErr bool
	}{
		{"minus one means no limit", "-1\n", "100000\n", 0, false, false},
		{"two periods of quota is two CPUs", "200000\n", "100000\n", 2, true, false},
		{"a bad period is malformed", "200000", "zero", 0, false, true},
		{"a bad quota is malformed", "", "100000", 0, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cpus, limited, err := ParseCFSQuota([]byte(tt.quota), []byte(tt.period))
			if (err != nil) != tt.isErr || cpus != tt.cpus || limited != tt.limited {
				t.Errorf("got %v, %v, %v; want %v, %v, err %v", cpus, limited, err, tt.cpus, tt.limited, tt.isErr)
			}
		})
	}
}

func TestParseMemoryLimit(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		bytes   int64
		limited bool
		isErr   bool
	}{
		{"v2 max means no limit", "max\n", 0, false, false},
		{"v1 page-counter maximum means no limit", "9223372036854771712\n", 0, false, false},
		{"v1 maximum with 64 KiB pages means no limit", "9223372036854710272", 0, false, false},
		{"two GiB is a limit", "2147483648\n", 2 << 30, true, false},
		{"negative numbers are malformed", "-1", 0, false, true},
		{"text is malformed", "unlimited", 0, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, limited, err := ParseMemoryLimit([]byte(tt.in))
			if (err != nil) != tt.isErr || b != tt.bytes || limited != tt.limited {
				t.Errorf("got %v, %v, %v; want %v, %v, err %v", b, limited, err, tt.bytes, tt.limited, tt.isErr)
			}
		})
	}
}

func TestParseCPUList(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		want  CPUList
		count int
		isErr bool
	}{
		{"ranges and single CPUs", "0-3,8,10-11\n", CPUList{{0, 3}, {8, 8}, {10, 11}}, 7, false},
		{"an empty cpuset is an empty list", "\n", CPUList{}, 0, false},
		{"overlapping ranges count each CPU once", "0-3,2-5", CPUList{{0, 3}, {2, 5}}, 6, false},
		{"a backwards range is malformed", "3-1", nil, 0, true},
		{"a CPU beyond NR_CPUS is malformed", "0-999999999", nil, 0, true},
		{"text is malformed", "all", nil, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseCPUList([]byte(tt.in))
			if (err != nil) != tt.isErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.isErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseCPUList (-want +got):\n%s", diff)
			}
			if got.Count() != tt.count {
				t.Errorf("Count() = %d, want %d", got.Count(), tt.count)
			}
		})
	}
	online, _ := ParseCPUList([]byte("0-15"))
	set, _ := ParseCPUList([]byte("2-3,6-7,20-21"))
	if n := online.Intersect(set); n != 4 {
		t.Errorf("Intersect = %d, want 4 (CPUs 20-21 are not online)", n)
	}
	if s := set.String(); s != "2-3,6-7,20-21" {
		t.Errorf("String() = %q", s)
	}
}

func TestLeafDir(t *testing.T) {
	tests := []struct {
		name      string
		root, mp  string
		proc, out string
	}{
		{"a host mount joins the process path", "/", "/sys/fs/cgroup", "/a/b", "/sys/fs/cgroup/a/b"},
		{"a container mount of its own cgroup maps to the mount point", "/docker/abc", "/sys/fs/cgroup/memory", "/docker/abc", "/sys/fs/cgroup/memory"},
		{"a sub-cgroup of the mount root keeps the rest", "/docker/abc", "/sys/fs/cgroup", "/docker/abc/sub", "/sys/fs/cgroup/sub"},
		{"a path outside the mount maps to the mount point", "/kubepods", "/sys/fs/cgroup", "/../..", "/sys/fs/cgroup"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := leafDir(Mount{Root: tt.root, MountPoint: tt.mp}, tt.proc); got != tt.out {
				t.Errorf("leafDir = %q, want %q", got, tt.out)
			}
		})
	}
}

func TestCgroupsOnFixtures(t *testing.T) {
	type want struct {
		quota     float64
		quotaOK   bool
		quotaFile string
		mem       float64
		memOK     bool
		cpuset    string
	}
	tests := []struct {
		name string
		tree string
		want want
	}{
		{
			name: "a tighter parent quota and limit win over the leaf's max (cgroup v2)",
			tree: "synthetic-cgroup2-nested",
			want: want{1.5, true, "/sys/fs/cgroup/batch.slice/job-42.scope/cpu.max", 2 << 30, true, "0-3"},
		},
		{
			name: "a Slurm job's limits bind its step (cgroup v1)",
			tree: "synthetic-cgroup1-slurm",
			want: want{2, true, "/sys/fs/cgroup/cpu,cpuacct/slurm/uid_1000/job_42/cpu.cfs_quota_us", 4 << 30, true, "2-3,6-7"},
		},
		{
			name: "a docker container's namespace root carries its limits",
			tree: "synthetic-docker-shm",
			want: want{2, true, "/sys/fs/cgroup/cpu.max", 2 << 30, true, ""},
		},
		{
			name: "the CI machine has no limits (v1 memory at the page-counter maximum)",
			tree: "ci-vm-amd64",
			want: want{cpuset: "0-1"},
		},
		{
			name: "a tree with no cgroup files has no limits",
			tree: "arm64-rpi4",
			want: want{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := LoadCgroups(fixture(tt.tree))
			var got want
			if q, ok := c.CPUQuota(); ok {
				got.quota, got.quotaOK, got.quotaFile = q.Value, true, q.Path
			}
			if m, ok := c.MemoryLimit(); ok {
				got.mem, got.memOK = m.Value, true
			}
			if s, _, ok := c.CPUSet(); ok {
				got.cpuset = s.String()
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("cgroup limits (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLoadCgroupsWithoutMountTable(t *testing.T) {
	dir := t.TempDir()
	write := func(p, s string) {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Synthetic: a v2 host with no /proc at all (a minimal chroot).
	write("sys/fs/cgroup/cgroup.controllers", "cpu memory\n")
	write("sys/fs/cgroup/cpu.max", "300000 100000\n")
	c := LoadCgroups(host.DirFS(dir))
	q, ok := c.CPUQuota()
	if !ok || q.Value != 3 {
		t.Errorf("CPUQuota = %v, %v; want 3 CPUs from the conventional mount", q, ok)
	}
}

func seeds(f *testing.F, paths ...string) {
	for _, p := range paths {
		if b, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "hosts", p)); err == nil {
			f.Add(b)
		}
	}
}

func FuzzParseMountInfo(f *testing.F) {
	seeds(f, "ci-vm-amd64/proc/self/mountinfo", "synthetic-docker-shm/proc/self/mountinfo")
	f.Add([]byte(`1 2 3 \ \0 \07 - x`))
	f.Fuzz(func(t *testing.T, b []byte) { ParseMountInfo(b) })
}

func FuzzParseMounts(f *testing.F) {
	f.Add([]byte("shm /dev/shm tmpfs rw,size=65536k 0 0\n"))
	f.Fuzz(func(t *testing.T, b []byte) { ParseMounts(b) })
}

func FuzzParseProcCgroup(f *testing.F) {
	seeds(f, "ci-vm-amd64/proc/self/cgroup", "synthetic-cgroup1-slurm/proc/self/cgroup")
	f.Fuzz(func(t *testing.T, b []byte) { ParseProcCgroup(b) })
}

func FuzzParseCPUMax(f *testing.F) {
	f.Add([]byte("max 100000"))
	f.Add([]byte("150000 100000"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if v, lim, err := ParseCPUMax(b); err == nil && lim && v <= 0 {
			t.Errorf("a limit must be positive, got %v", v)
		}
	})
}

func FuzzParseCFSQuota(f *testing.F) {
	f.Add([]byte("-1"), []byte("100000"))
	f.Add([]byte("200000"), []byte("100000"))
	f.Fuzz(func(t *testing.T, q, p []byte) {
		if v, lim, err := ParseCFSQuota(q, p); err == nil && lim && v <= 0 {
			t.Errorf("a limit must be positive, got %v", v)
		}
	})
}

func FuzzParseMemoryLimit(f *testing.F) {
	f.Add([]byte("max"))
	f.Add([]byte("9223372036854771712"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if v, lim, err := ParseMemoryLimit(b); err == nil && lim && (v < 0 || v >= UnlimitedBytes) {
			t.Errorf("limit %d out of range", v)
		}
	})
}

func FuzzParseCPUList(f *testing.F) {
	f.Add([]byte("0-3,8,10-11"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := ParseCPUList(b)
		if err == nil && l.Count() > maxCPU {
			t.Errorf("count %d beyond maxCPU", l.Count())
		}
	})
}

// usefulMounts drops lines before they are parsed; it must never drop a
// cgroup hierarchy or /dev/shm. Every mount table in testdata, plus lines
// built to trip a substring match.
func TestUsefulMountsKeepsEveryCgroupAndShmMount(t *testing.T) {
	var tables [][]byte
	for _, glob := range []string{"*/proc/self/mountinfo", "*/proc/*/mountinfo", "*/proc/mounts"} {
		m, _ := filepath.Glob(filepath.Join("..", "..", "..", "testdata", "*", glob))
		for _, p := range m {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			tables = append(tables, b)
		}
	}
	if len(tables) < 5 {
		t.Fatalf("found %d mount tables in testdata", len(tables))
	}
	tables = append(tables, []byte("1 0 0:1 / /dev/shm\\040x rw - tmpfs shm rw\n"+
		"2 0 0:2 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n"+
		"3 0 0:3 / /x rw - ext4 /dev/sda1 rw\n"+
		"4 0 0:4 / /dev/shm rw - tmpfs shm rw,size=64m"))
	wanted := func(ms []Mount) []Mount {
		var out []Mount
		for _, m := range ms {
			if m.FSType == "cgroup" || m.FSType == "cgroup2" || m.MountPoint == "/dev/shm" {
				out = append(out, m)
			}
		}
		return out
	}
	for i, b := range tables {
		for _, parse := range []func([]byte) []Mount{ParseMountInfo, ParseMounts} {
			if diff := cmp.Diff(wanted(parse(b)), wanted(parse(usefulMounts(b)))); diff != "" {
				t.Errorf("table %d: (-all +filtered):\n%s", i, diff)
			}
		}
	}
}
