package snapshot

import (
	"bytes"
	"path"
	"strings"
)

// WithheldValue is what replay answers for a variable that was set but whose
// value was withheld: drivers that only check presence see the same thing.
const WithheldValue = "[withheld]"

// secretWords are name segments that mark a secret wherever they stand.
var secretWords = map[string]bool{
	"TOKEN": true, "TOKENS": true, "SECRET": true, "SECRETS": true,
	"PASSWORD": true, "PASSWORDS": true, "PASSWD": true, "PASS": true, "PASSPHRASE": true,
	"KEY": true, "KEYS": true, "APIKEY": true, "CREDENTIAL": true, "CREDENTIALS": true, "CREDS": true,
	"AUTH": true, "COOKIE": true, "COOKIES": true, "SESSION": true, "PRIVATE": true,
	"SIGNATURE": true, "CERT": true, "JWT": true, "BEARER": true,
}

// secretSuffixes mark a segment glued to a secret word at its end
// ("GHTOKEN", "APIKEY", "DBPASSWORD"); secretPrefixes at its start
// ("AUTHORIZATION", "SECRETS", "PASSWORDFILE").
var (
	secretSuffixes = []string{"TOKEN", "SECRET", "PASSWORD", "PASSWD", "KEY", "CREDENTIAL", "CREDENTIALS", "COOKIE", "SESSION"}
	secretPrefixes = []string{"AUTH", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "PRIVATE", "SESSION", "COOKIE"}
)

// SecretName reports whether an environment variable's name looks like it
// holds a secret. Names are split into segments at '_', '-' and '.'; a
// segment is secret when it is one of the secret words, or ends with
// TOKEN/SECRET/PASSWORD/KEY/..., or starts with AUTH/SECRET/PASSWORD/....
// So HF_TOKEN, AWS_SECRET_ACCESS_KEY, OPENAI_API_KEY, GHTOKEN, DB_PASS,
// SSH_AUTH_SOCK and AUTHORIZATION are secret, while KEYBOARD_LAYOUT and
// TOKENIZERS_PARALLELISM are not. The rule errs towards withholding: a
// withheld variable still replays as set.
func SecretName(name string) bool {
	up := strings.ToUpper(name)
	for _, seg := range strings.FieldsFunc(up, func(r rune) bool { return r == '_' || r == '-' || r == '.' }) {
		if secretWords[seg] {
			return true
		}
		for _, s := range secretSuffixes {
			if strings.HasSuffix(seg, s) {
				return true
			}
		}
		for _, p := range secretPrefixes {
			if strings.HasPrefix(seg, p) {
				return true
			}
		}
	}
	return false
}

// withheldFile reports whether a file's contents must never be recorded
// however a driver came to read it: a process environment holds the very
// secrets the env policy keeps out.
func withheldFile(p string) bool {
	return strings.HasPrefix(p, "/proc/") && path.Base(p) == "environ"
}

// isCmdline reports whether p is a process command line.
func isCmdline(p string) bool {
	return strings.HasPrefix(p, "/proc/") && strings.HasSuffix(p, "/cmdline")
}

// scrubCmdline masks the values of secret-looking options in a
// NUL-separated command line: "--token=abc" becomes "--token=[withheld]",
// and in "--password abc" the argument after the option is masked.
func scrubCmdline(b []byte) []byte {
	if len(b) == 0 {
		return b
	}
	trail := b[len(b)-1] == 0
	if trail {
		b = b[:len(b)-1]
	}
	args := bytes.Split(b, []byte{0})
	maskNext := false
	for i, a := range args {
		if maskNext {
			args[i] = []byte(WithheldValue)
			maskNext = false
			continue
		}
		opt := strings.TrimLeft(string(a), "-")
		if name, _, ok := strings.Cut(opt, "="); ok {
			if SecretName(name) {
				args[i] = append(append([]byte{}, a[:len(a)-len(opt)+len(name)+1]...), WithheldValue...)
			}
			continue
		}
		if len(opt) < len(a) && SecretName(opt) {
			maskNext = true
		}
	}
	out := bytes.Join(args, []byte{0})
	if trail {
		out = append(out, 0)
	}
	return out
}

// scrubFDLink withholds where a process's open file points unless it is a
// device node: drivers scan /proc/*/fd to find who holds an accelerator
// (/dev/accel0, /dev/vfio/0, /dev/nvidia0), and the other targets are the
// names of users' files. Sockets, pipes and anon inodes carry no names and
// are kept.
func scrubFDLink(p, target string) string {
	if !strings.HasPrefix(p, "/proc/") || path.Base(path.Dir(p)) != "fd" {
		return target
	}
	if strings.HasPrefix(target, "/") && !strings.HasPrefix(target, "/dev/") {
		return WithheldValue
	}
	return target
}
