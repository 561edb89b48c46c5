//go:build !linux

package supervise

import (
	"io"
	"os"
	"os/exec"

	"github.com/devctl/devctl/internal/procgroup"
)

// Elsewhere the child is started in its own process group (where there
// are groups) and waited for by os/exec. There is no subreaper, no cgroup
// and no parent-death signal; the terminal stays devctl's (see
// docs/run.md).
type job struct {
	group
	waited chan os.Signal // closed when Wait returned
	ps     *os.ProcessState
	err    error
	done   bool
}

func startJob(s Spec, path string, files []*os.File) (*job, error) {
	cmd := exec.Command(path, s.Args...)
	cmd.Args[0] = s.Path
	cmd.Env, cmd.Dir = s.Env, s.Dir
	cmd.Stdin, cmd.Stdout, cmd.Stderr = files[0], files[1], files[2]
	cmd.SysProcAttr = procgroup.Attr()
	if err := cmd.Start(); err != nil {
		return nil, startError(s.Path, err)
	}
	j := &job{group: group{pid: cmd.Process.Pid, proc: cmd.Process}, waited: make(chan os.Signal)}
	go func() {
		j.err = cmd.Wait()
		j.ps = cmd.ProcessState
		close(j.waited)
	}()
	return j, nil
}

func (j *job) wake() <-chan os.Signal { return j.waited }

func (j *job) poll() bool {
	if !j.done {
		select {
		case <-j.waited:
			j.done = true
		default:
		}
	}
	return j.done
}

func (j *job) status() (int, string, error) {
	code, sig := exitStatus(j.ps)
	if code < 0 {
		return code, sig, j.err
	}
	return code, sig, nil
}

func (j *job) releaseTerminal()        {}
func (j *job) handedTo(io.Writer) bool { return false }

func blockTTOU() (restore func())      { return func() {} }
func (j *job) terminalInterrupt() bool { return false }
func (j *job) leftovers() bool         { return j.group.alive() }

func (j *job) endLeftovers(kill bool) {
	if kill {
		j.group.kill()
	} else {
		j.group.terminate()
	}
}

func (j *job) close() {}
