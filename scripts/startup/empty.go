//go:build ignore

// An empty Go program: the runtime's own start-up, for scripts/bench-startup.sh.
package main

import "os"

func main() { os.Stdout.WriteString("ok\n") }
