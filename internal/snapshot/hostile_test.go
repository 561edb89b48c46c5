package snapshot

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type member struct {
	name     string
	typ      byte
	body     string
	linkname string
	size     int64 // when set, declared size (body is streamed as zeros)
}

const okManifest = `{"format":1,"os":"linux","arch":"amd64","files":["/proc/cpuinfo"]}`

// makeArchive builds a tar.gz by hand, however wrong the members are.
func makeArchive(t testing.TB, ms ...member) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, m := range ms {
		typ := m.typ
		if typ == 0 {
			typ = tar.TypeReg
		}
		hdr := &tar.Header{Name: m.name, Typeflag: typ, Mode: 0o644, Linkname: m.linkname, Format: tar.FormatPAX}
		if typ == tar.TypeReg {
			hdr.Size = int64(len(m.body))
			if m.size > 0 {
				hdr.Size = m.size
			}
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if typ == tar.TypeReg {
			if m.size > 0 {
				if _, err := io.CopyN(tw, zeros{}, m.size); err != nil {
					t.Fatal(err)
				}
			} else if _, err := tw.Write([]byte(m.body)); err != nil {
				t.Fatal(err)
			}
		}
	}
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

func TestReadRefusesHostileArchives(t *testing.T) {
	manifest := member{name: "manifest.json", body: okManifest}
	cpuinfo := member{name: "files/proc/cpuinfo", body: "processor : 0\n"}
	// The limits are lowered so that hostile archives stay cheap to build;
	// one case checks the real member limit.
	defer func(l struct {
		member, total int64
		members       int
	}) {
		readLimits = l
	}(readLimits)
	readLimits.total = 8 << 20
	readLimits.members = 1000
	manyMembers := []member{manifest}
	for i := 0; i <= readLimits.members; i++ {
		manyMembers = append(manyMembers, member{name: "commands/m" + itoa(i)})
	}
	bomb := []member{manifest, cpuinfo}
	for i := 0; i < 3; i++ { // 3 x 4 MiB of zeros compress to ~12 KiB
		bomb = append(bomb, member{name: "commands/zero" + itoa(i), size: 4 << 20})
	}
	tests := []struct {
		name    string
		archive []byte
		want    string
	}{
		{"a valid archive opens", makeArchive(t, manifest, cpuinfo), ""},
		{"an absolute member name is refused", makeArchive(t, manifest, cpuinfo, member{name: "/etc/passwd", body: "x"}), `member "/etc/passwd": absolute paths are not allowed`},
		{"a member climbing out with .. is refused", makeArchive(t, manifest, cpuinfo, member{name: "files/../../etc/cron.d/x", body: "x"}), `".." is not allowed`},
		{"a windows drive path is refused", makeArchive(t, manifest, cpuinfo, member{name: `C:\Windows\x`, body: "x"}), "absolute paths are not allowed"},
		{"a symbolic link member is refused", makeArchive(t, manifest, cpuinfo, member{name: "files/sys/x", typ: tar.TypeSymlink, linkname: "/etc/shadow"}), `member "files/sys/x" is a link (to "/etc/shadow"): links are not allowed`},
		{"a hard link member is refused", makeArchive(t, manifest, cpuinfo, member{name: "files/sys/y", typ: tar.TypeLink, linkname: "manifest.json"}), "links are not allowed"},
		{"a character device member is refused", makeArchive(t, manifest, cpuinfo, member{name: "files/dev/nvidia0", typ: tar.TypeChar}), "is a device or fifo"},
		{"a fifo member is refused", makeArchive(t, manifest, cpuinfo, member{name: "files/dev/fifo", typ: tar.TypeFifo}), "is a device or fifo"},
		{"an oversized member is refused", makeArchive(t, manifest, cpuinfo, member{name: "commands/big", size: MaxMemberSize + 1}), "over the 16 MiB limit"},
		{"a small gzip expanding past the total limit is refused", makeArchive(t, bomb...), "uncompressed size over the 8 MiB limit"},
		{"too many members are refused", makeArchive(t, manyMembers...), "more than 1000 members"},
		{"a duplicate member is refused", makeArchive(t, manifest, cpuinfo, cpuinfo), "appears twice"},
		{"an unexpected member name is refused", makeArchive(t, manifest, cpuinfo, member{name: "evil.sh", body: "x"}), `member "evil.sh": unexpected name`},
		{"a member the manifest does not name is refused", makeArchive(t, manifest, cpuinfo, member{name: "files/etc/shadow", body: "x"}), `member "files/etc/shadow" is not named by manifest.json`},
		{"an archive without a manifest is refused", makeArchive(t, cpuinfo), "no manifest.json"},
		{"a manifest that is not JSON is refused", makeArchive(t, member{name: "manifest.json", body: "{not json"}), "manifest.json is malformed"},
		{"a manifest without a format is refused", makeArchive(t, member{name: "manifest.json", body: `{"os":"linux","arch":"amd64"}`}), "no format version"},
		{"a manifest from the future is refused", makeArchive(t, member{name: "manifest.json", body: `{"format":99,"os":"linux","arch":"amd64"}`}), "format 99 is newer"},
		{"a manifest with a relative path is refused", makeArchive(t, member{name: "manifest.json", body: `{"format":1,"os":"linux","arch":"amd64","stats":{"etc/x":{"type":"file","perm":"0644"}}}`}), `stat path "etc/x" is not absolute and clean`},
		{"a manifest with a .. path is refused", makeArchive(t, member{name: "manifest.json", body: `{"format":1,"os":"linux","arch":"amd64","links":{"/a/../b":"x"}}`}), "is not absolute and clean"},
		{"a manifest naming a missing file member is refused", makeArchive(t, member{name: "manifest.json", body: okManifest}), `file "/proc/cpuinfo" has no member`},
		{"a manifest with a bad entry name is refused", makeArchive(t, member{name: "manifest.json", body: `{"format":1,"os":"linux","arch":"amd64","dirs":{"/sys":[{"name":"../x","type":"dir"}]}}`}), "bad entry name"},
		{"a manifest with a bad os is refused", makeArchive(t, member{name: "manifest.json", body: `{"format":1,"os":"Linux; rm -rf","arch":"amd64"}`}), "bad os/arch"},
		{"a manifest with an unknown error kind is refused", makeArchive(t, member{name: "manifest.json", body: `{"format":1,"os":"linux","arch":"amd64","sysctl":{"a":{"error":{"kind":"boom"}}}}`}), `unknown error kind "boom"`},
		{"a file that is not gzip is refused", []byte("PK\x03\x04 a zip file"), "not a gzip-compressed tar"},
		{"a truncated archive is refused", makeArchive(t, manifest, cpuinfo)[:40], "truncated"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Read(bytes.NewReader(tt.archive))
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Read: %v", err)
			case tt.want != "" && err == nil:
				t.Fatalf("Read accepted the archive, want an error containing %q", tt.want)
			case tt.want != "" && !strings.Contains(err.Error(), tt.want):
				t.Fatalf("Read error %q, want it to contain %q", err, tt.want)
			case err != nil && strings.Contains(err.Error(), "\n"):
				t.Errorf("error is not one line: %q", err)
			}
		})
	}
}

func itoa(i int) string {
	const digits = "0123456789"
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{digits[i%10]}, b...)
	}
	return string(b)
}

// FuzzOpen feeds arbitrary bytes to the archive reader: it must return an
// archive or an error, never panic, and a host it returns must answer.
func FuzzOpen(f *testing.F) {
	f.Add(makeArchive(f, member{name: "manifest.json", body: okManifest}, member{name: "files/proc/cpuinfo", body: "x"}))
	f.Add(makeArchive(f, member{name: "manifest.json", body: `{"format":1,"os":"linux","arch":"amd64","dirs":{"/sys":[{"name":"a","type":"symlink"}]},"lstats":{"/sys/a":{"type":"dir","perm":"4755","size":3}},"commands":[{"name":"x","args":["-q"],"stdout":"commands/0001-x.out","error":{"kind":"timeout","message":"x: deadline"}}],"nvml":{"member":"nvml.json"}}`},
		member{name: "commands/0001-x.out", body: "out"}, member{name: "nvml.json", body: "{}"}))
	f.Add(makeArchive(f, member{name: "manifest.json", body: `{"format":1}`}))
	f.Add([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Read(bytes.NewReader(data))
		if err != nil {
			return
		}
		h := s.Host()
		for p := range s.Manifest.Dirs {
			es, _ := h.FS.ReadDir(p)
			for _, e := range es {
				e.Info()
			}
		}
		for _, p := range s.Manifest.Files {
			h.FS.ReadFile(p)
		}
		for p := range s.Manifest.Stats {
			h.FS.Stat(p)
		}
		h.FS.ReadFile("relative")
		h.Getenv("HF_TOKEN")
		h.Sysctl.Get("hw.memsize")
	})
}

// FuzzManifestValidate decodes arbitrary manifests: validation must never
// panic, whatever the JSON holds.
func FuzzManifestValidate(f *testing.F) {
	f.Add([]byte(okManifest))
	f.Add([]byte(`{"format":1,"os":"linux","arch":"amd64","errors":[{"op":"read","path":"/x","kind":"permission","message":"denied"}],"nvml":{}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		archive := makeArchive(t, member{name: "manifest.json", body: string(data)}, member{name: "files/proc/cpuinfo", body: "x"})
		s, err := Read(bytes.NewReader(archive))
		if err == nil {
			s.Host()
		}
	})
}

func TestTheWriterRefusesWhatReplayRefusesWithReplaysLimit(t *testing.T) {
	if err := checkTotal(MaxTotalSize); err != nil {
		t.Errorf("a stream of exactly the replay limit is refused: %v", err)
	}
	err := checkTotal(MaxTotalSize + 1)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("over the %d MiB a replay accepts", MaxTotalSize>>20)) {
		t.Errorf("over the limit: %v; want the replay limit named", err)
	}
	// What the writer counts covers what the tar writer emits.
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	want := int64(tarTrailer)
	for _, m := range []struct {
		name string
		size int
	}{{"manifest.json", 700}, {"files/" + strings.Repeat("d/", 80) + "x", 1}, {"files/caf\xe9", 513}} {
		tw.WriteHeader(&tar.Header{Name: m.name, Size: int64(m.size), Mode: 0o644, Typeflag: tar.TypeReg})
		tw.Write(make([]byte, m.size))
		want += tarMemberSize(m.name, m.size)
	}
	tw.Close()
	if int64(buf.Len()) > want {
		t.Errorf("tar stream is %d bytes, the writer counted %d", buf.Len(), want)
	}
}

// TestACutGzipTrailerIsRefused: a snapshot whose last bytes (the gzip
// trailer: CRC-32 and size, RFC 1952 section 2.3) were cut replayed as if
// whole (issue 22): the tar stream ends before the trailer, and nothing
// read it. The real H100 snapshot is cut by 1, 4 and 8 bytes, and its
// CRC is damaged; each is refused, and the whole file still replays.
func TestACutGzipTrailerIsRefused(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "snapshots", "nvidia-h100-pcie-x2.tar.gz"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Read(bytes.NewReader(data)); err != nil {
		t.Fatalf("the whole snapshot: %v", err)
	}
	for _, cut := range []int{1, 4, 8} {
		_, err := Read(bytes.NewReader(data[:len(data)-cut]))
		if err == nil || !strings.Contains(err.Error(), "truncated") {
			t.Errorf("cut by %d bytes: %v, want it refused as truncated", cut, err)
		}
	}
	bad := bytes.Clone(data)
	bad[len(bad)-8] ^= 0xff // the CRC-32's first byte
	if _, err := Read(bytes.NewReader(bad)); err == nil || !strings.Contains(err.Error(), "checksum") {
		t.Errorf("a damaged CRC: %v, want it refused", err)
	}
}
