package fakehost

import (
	"testing"

	"github.com/devctl/devctl/internal/host"
)

// WriteT is Write for tests: a failure ends the test.
func WriteT(t testing.TB, root string, files Files) {
	t.Helper()
	if err := Write(root, files); err != nil {
		t.Fatal(err)
	}
}

// Tree writes files into a new temporary directory and returns it.
func Tree(t testing.TB, files Files) string {
	t.Helper()
	root := t.TempDir()
	WriteT(t, root, files)
	return root
}

// Host writes files into a new temporary directory and returns a Linux
// Host rooted there, with env as its whole environment.
func Host(t testing.TB, files Files, env map[string]string) *host.Host {
	t.Helper()
	return RootHost(t, Tree(t, files), env)
}

// RootHost returns a Linux Host rooted at an existing tree (testdata), run
// by an unprivileged user in the users group.
func RootHost(t testing.TB, root string, env map[string]string) *host.Host {
	t.Helper()
	h, err := host.Local(host.LocalOptions{Sysroot: root})
	if err != nil {
		t.Fatal(err)
	}
	if env == nil {
		env = map[string]string{}
	}
	h.Env = host.MapEnv(env)
	h.Identity = host.Identity{UID: 1000, Groups: []string{"users"}}
	return h
}
