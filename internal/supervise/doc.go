// Package supervise runs one command as a good parent process and decides
// how to rerun it when it fails for a reason a changed environment can fix.
//
// Run starts the command in its own process group, passes its stdout and
// stderr through byte for byte as they arrive (never line-buffered), keeps a
// bounded tail of both for diagnosis, forwards the signals it is given to
// the whole group (a second interrupt kills it; a child that ignores a
// termination signal is killed after a grace period), reaps it and reports
// its exit code the way shells and init processes do (128+signal when a
// signal killed it).
//
// Ladder is the recovery planner: given the category the log classifier
// found, it returns the next, cheapest environment change to try, or why
// there is none. It is a pure state machine, so it is tested without
// starting anything.
//
// The package never prints and never reads the process environment: the
// command layer passes the environment, the streams and the signals in.
package supervise
