//go:build !unix

package userfile

const oNonblock = 0
