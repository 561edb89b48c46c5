// Package cmdutil holds what every command shares: the Factory of lazily
// built dependencies, the global options and the error kinds that decide the
// exit code.
package cmdutil

import (
	"maps"
	"sync"
	"time"

	"github.com/devctl/devctl/internal/config"
	"github.com/devctl/devctl/internal/host"
	"github.com/devctl/devctl/internal/iostreams"
)

// GlobalOptions are the flags every command accepts.
type GlobalOptions struct {
	Sysroot string
	// SysrootFrom names where Sysroot came from, for messages: "--sysroot"
	// or "DEVCTL_SYSROOT".
	SysrootFrom string
	From        string
	Config      string
	NoColor     bool
	Timeout     time.Duration
	NvidiaSMI   string
	// ConfigFlags are config keys set by flags (--device, --precision, ...).
	ConfigFlags map[string]config.Flag
}

// Factory builds what commands need, once, when they first ask.
type Factory struct {
	IO      *iostreams.IOStreams
	Version string
	Global  *GlobalOptions
	Now     func() time.Time
	// LookupEnv reads the process environment (tests inject a map).
	LookupEnv func(string) (string, bool)

	// MachineIDFunc returns this machine's hashed id (history.MachineID
	// over the live machine's files); nil means none. Tests inject one.
	MachineIDFunc func() string

	// HostFunc and ConfigFunc may be replaced by tests. ConfigFunc loads
	// the configuration with the given flag layer.
	HostFunc   func() (*host.Host, error)
	ConfigFunc func(flags map[string]config.Flag) (*config.Config, error)

	hostOnce sync.Once
	host     *host.Host
	hostErr  error
	cfgOnce  sync.Once
	cfg      *config.Config
	cfgErr   error
	idOnce   sync.Once
	id       string
}

// MachineID returns this machine's hashed id, read once ("" when none).
func (f *Factory) MachineID() string {
	f.idOnce.Do(func() {
		if f.MachineIDFunc != nil {
			f.id = f.MachineIDFunc()
		}
	})
	return f.id
}

// Replay reports whether this invocation describes another machine: a
// --from snapshot or a --sysroot tree. Its runs are never this machine's
// history, and this machine's history never steers it.
func (f *Factory) Replay() bool {
	return f.Global != nil && (f.Global.From != "" || f.Global.Sysroot != "")
}

// Host returns the machine to describe (live, --sysroot or --from).
func (f *Factory) Host() (*host.Host, error) {
	f.hostOnce.Do(func() { f.host, f.hostErr = f.HostFunc() })
	return f.host, f.hostErr
}

// Config returns the effective configuration.
func (f *Factory) Config() (*config.Config, error) {
	f.cfgOnce.Do(func() { f.cfg, f.cfgErr = f.ConfigFunc(f.Global.ConfigFlags) })
	return f.cfg, f.cfgErr
}

// ConfigWith returns the configuration with flags a command sets on top of
// the global ones (recommend's --strategy and --device). The factory's own
// configuration stays as it is, for the other commands.
func (f *Factory) ConfigWith(extra map[string]config.Flag) (*config.Config, error) {
	if len(extra) == 0 {
		return f.Config()
	}
	flags := make(map[string]config.Flag, len(f.Global.ConfigFlags)+len(extra))
	maps.Copy(flags, f.Global.ConfigFlags)
	maps.Copy(flags, extra)
	return f.ConfigFunc(flags)
}

// Getenv reads one variable of the process environment.
func (f *Factory) Getenv(name string) string {
	v, _ := f.LookupEnv(name)
	return v
}
