//go:build !darwin

package host

type localSysctl = NoSysctl
