// Package doctor diagnoses a machine's compute devices: each check looks at
// the Host (files, environment, identity, recorded NVML answers) and the
// probe report, and returns a Finding with the evidence and one fix.
//
// Checks are data plus a function. Their messages (title, detail templates,
// fixes) are data too: an i18n.Catalog, the same kind that holds the log
// explanations, filled from messages_en.go and messages_pl.go and rendered
// per language, so that findings can be translated and tested without
// touching the logic. Run executes checks concurrently, each under
// its own deadline; a check that errors, panics or hangs becomes an
// "error" or "timeout" finding and never stops the others.
//
// Nothing here prints, reads flags or touches the real machine except
// through host.Host: every check works on a --sysroot tree or a --from
// snapshot exactly as on the live machine.
package doctor
