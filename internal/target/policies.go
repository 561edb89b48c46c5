package target

// The policies of devctl's writers, one per flag, so that each command
// checks its path when it starts (Allow) and writes it (Write, WriteJSON,
// Create) under the same rules.
var (
	// RunReport is `devctl run --report FILE`.
	RunReport = Policy{Flag: "--report", Replace: true}
	// NFDFile is `--nfd-file` (probe -o nfd, serve): the feature file
	// nfd-worker reads, 0644 whatever the old one had, as the worker may
	// run as another user.
	NFDFile = Policy{Flag: "--nfd-file", Replace: true, Perm: 0o644}
	// Cache is devctl's own cache files (the Hugging Face files it
	// downloads).
	Cache = Policy{Replace: true}
)

// Snapshot is `devctl snapshot -o FILE`: an existing file is replaced
// only with --force.
func Snapshot(force bool) Policy {
	return Policy{Flag: "-o", Replace: force, Hint: "pass --force to overwrite it"}
}

// Allow checks a path given on the command line before the command does
// anything: nil when the flag was not given ("") or the path may be
// written under p, else the one-line refusal (exit 2).
func (p Policy) Allow(path string) error {
	if path == "" {
		return nil
	}
	_, err := p.Check(path)
	return err
}
