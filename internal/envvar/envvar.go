// Package envvar is the one environment-variable type: what recommend
// advises exporting, what run sets for its child, and how either is
// written for a POSIX shell.
package envvar

import "strings"

// Var is one variable and, when devctl advises it, why.
type Var struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	Why   string `json:"why,omitempty"`
}

// Export is the shell line that sets v: export NAME=quoted-value.
func (v Var) Export() string { return "export " + v.Name + "=" + Quote(v.Value) }

// Quote quotes a value for POSIX shells: safe characters stay bare,
// everything else goes in single quotes with embedded quotes escaped.
func Quote(v string) string {
	if v == "" {
		return "''"
	}
	safe := true
	for _, r := range v {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_@%+=:,./-", r)) {
			safe = false
			break
		}
	}
	if safe {
		return v
	}
	return "'" + strings.ReplaceAll(v, "'", `'\''`) + "'"
}
