package snapshot

import (
	"archive/tar"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"sort"
	"time"
)

// WriteOptions control what Write stores.
type WriteOptions struct {
	// RedactHost replaces the hostname, serial numbers and UUIDs with
	// stable placeholders.
	RedactHost bool
	// DevctlVersion is stored for the person reading a bug report.
	DevctlVersion string
	// Created is the snapshot's time, and the clock of its replay; zero
	// means the host's Now.
	Created time.Time
}

// Summary counts what a snapshot holds, for the message after writing.
type Summary struct {
	Files       int   `json:"files"`
	Commands    int   `json:"commands"`
	Env         int   `json:"env"`
	EnvWithheld int   `json:"env_withheld"`
	NVML        bool  `json:"nvml"`
	Bytes       int64 `json:"bytes"`
}

// Write writes the snapshot as a tar.gz to w. The same recorded answers
// and options always give the same bytes.
func (r *Recorder) Write(w io.Writer, opts WriteOptions) (Summary, error) {
	m, members, err := r.build(opts)
	if err != nil {
		return Summary{}, err
	}
	m.mapNames(func(s string) (string, error) { return encodeName(s), nil })
	mj, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return Summary{}, fmt.Errorf("encoding manifest: %w", err)
	}
	mj = append(mj, '\n')
	if len(mj) > MaxMemberSize {
		return Summary{}, fmt.Errorf("manifest is %d bytes, over the %d MiB limit a replay accepts", len(mj), MaxMemberSize>>20)
	}
	names := make([]string, 0, len(members))
	total := tarMemberSize(manifestMember, len(mj)) + tarTrailer
	for name, b := range members {
		names = append(names, name)
		total += tarMemberSize(name, len(b))
	}
	if len(names)+1 > MaxMembers {
		return Summary{}, fmt.Errorf("snapshot would hold %d members, over the %d a replay accepts", len(names)+1, MaxMembers)
	}
	if err := checkTotal(total); err != nil {
		return Summary{}, err
	}
	sort.Strings(names)

	cw := &countWriter{w: w}
	zw, err := gzip.NewWriterLevel(cw, gzip.BestCompression)
	if err != nil {
		return Summary{}, err
	}
	tw := tar.NewWriter(zw)
	mtime := m.Created.UTC().Truncate(time.Second)
	add := func(name string, b []byte) error {
		hdr := &tar.Header{Name: name, Mode: 0o644, Size: int64(len(b)), ModTime: mtime, Typeflag: tar.TypeReg}
		if err := tw.WriteHeader(hdr); err != nil {
			return fmt.Errorf("writing %s: %w", name, err)
		}
		if _, err := tw.Write(b); err != nil {
			return fmt.Errorf("writing %s: %w", name, err)
		}
		return nil
	}
	if err := add(manifestMember, mj); err != nil {
		return Summary{}, err
	}
	for _, name := range names {
		if err := add(name, members[name]); err != nil {
			return Summary{}, err
		}
	}
	if err := tw.Close(); err != nil {
		return Summary{}, fmt.Errorf("writing snapshot: %w", err)
	}
	if err := zw.Close(); err != nil {
		return Summary{}, fmt.Errorf("writing snapshot: %w", err)
	}
	return Summary{
		Files:       len(m.Files),
		Commands:    len(m.Commands),
		Env:         len(m.Env),
		EnvWithheld: len(m.EnvWithheld),
		NVML:        m.NVML != nil,
		Bytes:       cw.n,
	}, nil
}

// tarTrailer is the two zero blocks that end a tar stream.
const tarTrailer = 2 * 512

// tarMemberSize bounds from above what one member adds to the uncompressed
// tar stream that replay counts against MaxTotalSize: its header, a long
// name's extra header and name blocks, and its data padded to 512 bytes.
func tarMemberSize(name string, size int) int64 {
	pad := func(n int) int64 { return int64((n + 511) / 512 * 512) }
	n := 512 + pad(size)
	if len(name) > 100 || !isASCII(name) {
		n += 512 + pad(len(name)+1+64) // PAX or GNU long-name record
	}
	return n
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// checkTotal refuses a snapshot whose tar stream replay would refuse, with
// the limit replay applies.
func checkTotal(total int64) error {
	if total > MaxTotalSize {
		return fmt.Errorf("snapshot would be %d bytes uncompressed, over the %d MiB a replay accepts", total, MaxTotalSize>>20)
	}
	return nil
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// build turns the recorded answers into a manifest and members, redacting
// when asked. It walks everything in sorted order so that placeholders are
// numbered the same way every time.
func (r *Recorder) build(opts WriteOptions) (*Manifest, map[string][]byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	created := opts.Created
	if created.IsZero() {
		if r.base.Now != nil {
			created = r.base.Now()
		} else {
			created = time.Now()
		}
	}
	x := newRedactor(opts.RedactHost, r.base.Hostname)

	filePaths := sortedKeys(r.files)
	cmdKeys := sortedKeys(r.cmds)
	// Pass 1: find serials wherever they are.
	for _, p := range filePaths {
		x.collectFile(p, r.files[p])
	}
	for _, k := range cmdKeys {
		x.collectLines(r.cmds[k].stdout)
	}
	if r.nvml != nil && r.nvml.err == nil {
		x.collectNVML(r.nvml.data)
	}
	x.finish()

	// Pass 2: build, replacing identifiers consistently.
	m := &Manifest{
		Format:        FormatVersion,
		DevctlVersion: opts.DevctlVersion,
		Created:       created.UTC().Truncate(time.Second),
		OS:            r.base.OS,
		Arch:          r.base.Arch,
		Hostname:      r.base.Hostname,
		Redacted:      opts.RedactHost,
		Identity:      r.base.Identity,
		Env:           map[string]string{},
		EnvUnset:      sortedKeys(r.unset),
		EnvWithheld:   sortedKeys(r.withheld),
		Files:         []string{},
		Dirs:          map[string][]Entry{},
		Stats:         map[string]Stat{},
		Lstats:        map[string]Stat{},
		Links:         map[string]string{},
		Missing:       []string{},
		Errors:        []FileError{},
		Commands:      []Command{},
		LookPath:      map[string]Answer{},
		Sysctl:        map[string]Answer{},
	}
	if opts.RedactHost {
		m.Hostname = RedactedHostname
		if r.base.Hostname == "" {
			m.Hostname = ""
		}
	}
	members := map[string][]byte{}
	for _, p := range filePaths {
		rp := x.path(p)
		name := filesDir + rp[1:]
		if _, dup := members[name]; dup {
			continue
		}
		members[name] = x.bytes(r.files[p])
		m.Files = append(m.Files, rp)
	}
	sort.Strings(m.Files)
	for _, p := range sortedKeys(r.dirs) {
		es := make([]Entry, len(r.dirs[p]))
		for i, e := range r.dirs[p] {
			es[i] = Entry{Name: x.path(e.Name), Type: e.Type}
		}
		sort.Slice(es, func(i, j int) bool { return es[i].Name < es[j].Name })
		m.Dirs[x.path(p)] = es
	}
	for _, p := range sortedKeys(r.stats) {
		m.Stats[x.path(p)] = r.stats[p]
	}
	for _, p := range sortedKeys(r.lstats) {
		m.Lstats[x.path(p)] = r.lstats[p]
	}
	for _, p := range sortedKeys(r.links) {
		m.Links[x.path(p)] = x.path(r.links[p])
	}
	for _, p := range sortedKeys(r.missing) {
		m.Missing = append(m.Missing, x.path(p))
	}
	sort.Strings(m.Missing)
	for _, k := range sortedKeys(r.errs) {
		e := r.errs[k]
		e.Path = x.path(e.Path)
		e.Message = x.str(e.Message)
		m.Errors = append(m.Errors, e)
	}
	sort.Slice(m.Errors, func(i, j int) bool {
		if m.Errors[i].Path != m.Errors[j].Path {
			return m.Errors[i].Path < m.Errors[j].Path
		}
		return m.Errors[i].Op < m.Errors[j].Op
	})
	for i, k := range cmdKeys {
		c := r.cmds[k]
		args := make([]string, len(c.args))
		for j, a := range c.args {
			args[j] = x.str(a)
		}
		cmd := Command{Name: c.name, Args: args, Error: x.fail(c.err)}
		if len(c.stdout) > 0 {
			cmd.Stdout = fmt.Sprintf("%s%04d-%s.out", commandsDir, i+1, safeName(c.name))
			members[cmd.Stdout] = x.bytes(c.stdout)
		}
		m.Commands = append(m.Commands, cmd)
	}
	for _, k := range sortedKeys(r.lookpath) {
		a := r.lookpath[k]
		m.LookPath[k] = Answer{Value: x.str(a.value), Error: x.fail(a.err)}
	}
	for _, k := range sortedKeys(r.sysctl) {
		a := r.sysctl[k]
		m.Sysctl[k] = Answer{Value: x.str(a.value), Error: x.fail(a.err)}
	}
	for _, k := range sortedKeys(r.env) {
		m.Env[k] = x.str(r.env[k])
	}
	if r.nvml != nil {
		m.NVML = &NVMLRecord{Error: x.fail(r.nvml.err)}
		if r.nvml.err == nil {
			m.NVML.Member = nvmlMember
			members[nvmlMember] = x.bytes(r.nvml.data)
		}
	}
	return m, members, nil
}

func (x *redactor) fail(err error) *Fail {
	f := failOf(err)
	if f != nil {
		f.Message = x.str(f.Message)
	}
	return f
}

// safeName keeps a program name readable in a member name.
func safeName(name string) string {
	b := []byte(path.Base(name))
	for i, c := range b {
		if !tokenByte(c) && c != '.' {
			b[i] = '_'
		}
	}
	if len(b) > 40 {
		b = b[:40]
	}
	return string(b)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
