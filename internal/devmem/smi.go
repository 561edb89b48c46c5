package devmem

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// SMIArgs are the arguments of the nvidia-smi stream: one long-lived
// process doing its own polling every interval (-lms), printing one CSV
// line per compute process, all lines of one poll with the same
// timestamp, and nothing when no process holds a GPU. Fields, in order:
// timestamp, gpu_uuid, pid, used_memory (MiB with nounits). The field
// names are nvidia-smi's --query-compute-apps properties (the man page,
// https://manpages.ubuntu.com/manpages/noble/man1/nvidia-smi.1.html; the
// same query with -l/-lms is how public samplers use it, e.g.
// mauriciocramos/linux-scripts nvidia-log-compute-apps.sh).
func SMIArgs(interval time.Duration) []string {
	ms := max(interval.Milliseconds(), 1)
	return []string{"--query-compute-apps=timestamp,gpu_uuid,pid,used_memory", "--format=csv,noheader,nounits", "-lms", strconv.FormatInt(ms, 10)}
}

// SMI is a Source reading a running `nvidia-smi --query-compute-apps`
// stream. Start it before the job: it is devctl's child, not the job's.
type SMI struct {
	cmd  *exec.Cmd
	done chan struct{}

	mu      sync.Mutex
	polls   []Reading
	stamp   string  // the timestamp of the poll being read
	current Reading // its lines so far
	err     error
}

// StartSMI starts path (nvidia-smi) with SMIArgs. It returns ErrUnavailable
// when the program cannot be started.
func StartSMI(path string, interval time.Duration) (*SMI, error) {
	cmd := exec.Command(path, SMIArgs(interval)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrUnavailable, path, err)
	}
	s := &SMI{cmd: cmd, done: make(chan struct{})}
	go s.read(out)
	return s, nil
}

// NewSMIReader is a Source over an nvidia-smi stream already running (tests
// feed it text).
func NewSMIReader(r io.Reader) *SMI {
	s := &SMI{done: make(chan struct{})}
	go s.read(r)
	return s
}

func (s *SMI) read(r io.Reader) {
	defer close(s.done)
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		stamp, u, ok := ParseSMILine(sc.Text())
		if !ok {
			continue
		}
		s.mu.Lock()
		if stamp != s.stamp && s.current != nil {
			s.polls = append(s.polls, s.current)
			s.current = nil
		}
		s.stamp = stamp
		s.current = append(s.current, u)
		s.mu.Unlock()
	}
	s.mu.Lock()
	s.err = sc.Err()
	s.mu.Unlock()
}

// ParseSMILine reads one line of the stream: "2024/05/14 10:21:33.402,
// GPU-6c0a..., 12345, 10240". A line whose memory is not a number
// ("[N/A]" where the driver cannot attribute memory) is skipped.
func ParseSMILine(line string) (stamp string, u Usage, ok bool) {
	f := strings.Split(line, ",")
	if len(f) != 4 {
		return "", Usage{}, false
	}
	for i := range f {
		f[i] = strings.TrimSpace(f[i])
	}
	pid, err := strconv.Atoi(f[2])
	if err != nil || pid <= 0 {
		return "", Usage{}, false
	}
	mib, err := strconv.ParseInt(f[3], 10, 64)
	if err != nil || mib < 0 || mib > 1<<40 {
		return "", Usage{}, false
	}
	return f[0], Usage{PID: pid, Device: f[1], Bytes: mib << 20}, true
}

// Method names the source.
func (s *SMI) Method() string { return MethodSMI }

// Read returns the polls completed since the last call and the one being
// read.
func (s *SMI) Read(context.Context) ([]Reading, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.polls
	s.polls = nil
	if s.current != nil {
		out = append(out, append(Reading(nil), s.current...))
	}
	if len(out) == 0 && s.err != nil {
		return nil, s.err
	}
	return out, nil
}

// Close stops the stream and waits for it.
func (s *SMI) Close() error {
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Kill()
		err := s.cmd.Wait()
		<-s.done
		var ee *exec.ExitError
		if err != nil && !asExit(err, &ee) {
			return err
		}
		return nil
	}
	return nil
}

func asExit(err error, target **exec.ExitError) bool {
	ee, ok := err.(*exec.ExitError)
	if ok {
		*target = ee
	}
	return ok
}
