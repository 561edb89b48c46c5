package root

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/devctl/devctl/internal/config"
	"github.com/devctl/devctl/internal/safetext"
	"github.com/devctl/devctl/internal/suggest"
)

// envPrefix starts every variable devctl reads.
const envPrefix = "DEVCTL_"

// knownEnv are the DEVCTL_* variables devctl reads.
func knownEnv() []string {
	known := []string{"DEVCTL_SYSROOT"}
	for _, name := range config.EnvVars {
		known = append(known, name)
	}
	sort.Strings(known)
	return known
}

// EnvTypos returns one warning for each DEVCTL_* name in names that devctl
// does not read but that is close to one it does: DEVCTL_PRECISSION would
// otherwise be ignored without a word. A name close to none is left alone
// (another tool's, or a test's).
func EnvTypos(names []string) []string {
	known := knownEnv()
	suffixes := make([]string, len(known))
	for i, k := range known {
		suffixes[i] = strings.TrimPrefix(k, envPrefix)
	}
	var out []string
	for _, n := range names {
		rest, ok := strings.CutPrefix(n, envPrefix)
		if !ok || rest == "" || slices.Contains(known, n) {
			continue
		}
		if s := suggest.Closest(rest, suffixes); s != "" {
			out = append(out, fmt.Sprintf("%s is not a devctl variable and is ignored; did you mean %s%s?", n, envPrefix, s))
		}
	}
	sort.Strings(out)
	return out
}

// warnEnvTypos prints EnvTypos for the names in environ that lookupEnv
// also sees (tests inject their own environment).
func warnEnvTypos(w io.Writer, environ []string, lookupEnv func(string) (string, bool)) {
	var names []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, envPrefix) {
			continue
		}
		if _, ok := lookupEnv(name); ok {
			names = append(names, name)
		}
	}
	for _, msg := range EnvTypos(names) {
		fmt.Fprintf(w, "devctl: warning: %s\n", safetext.Clean(msg))
	}
}
