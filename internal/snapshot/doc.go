// Package snapshot records everything probe drivers (and doctor checks)
// learn about a machine into a tar.gz, and replays such an archive as a
// host.Host on any machine and OS.
//
// A snapshot is how a user attaches their machine to a bug report and how
// new hardware becomes a test fixture, so two promises shape the package:
//
//   - Recording keeps only what the drivers asked for, through the Host:
//     files read, directory listings, stat results, link targets, paths that
//     were missing, program output, sysctl answers, NVML answers and the
//     environment variables that were looked up. Variables whose name looks
//     secret (TOKEN, SECRET, PASSWORD, KEY, ...) are never stored, nor is any
//     /proc/<pid>/environ; secret-looking arguments in /proc/<pid>/cmdline
//     are masked, and every text recorded (files, variables, program
//     output and arguments, link targets) passes through secret.Scrub,
//     which masks values by their shape.
//   - Replay treats the archive as hostile: absolute or escaping member
//     names, links, device files, oversized members or totals and a
//     malformed manifest are each refused with one clear error. Replay never
//     writes to disk and never follows a link; it is pure Go and builds
//     without cgo for every OS.
//
// Layout of an archive (all members regular files, sorted, fixed times):
//
//	manifest.json          format, versions, os/arch, identity, env, stats,
//	                       listings, links, missing paths, errors, commands,
//	                       sysctl, nvml
//	files/<path>           contents of each file read (path without its "/")
//	commands/NNNN.out      standard output of each program run
//	nvml.json              the raw NVML answer, when NVML was queried
package snapshot
