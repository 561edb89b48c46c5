package target

import (
	"bytes"
	"encoding/json"

	"github.com/devctl/devctl/internal/output"
	"github.com/devctl/devctl/internal/safetext"
	"github.com/devctl/devctl/internal/secret"
)

// WriteJSON writes v as a JSON document to path under the policy: encoded
// by the one exporter (output.MarshalJSON), with every string passed
// through the one scrubber (secret.ScrubJSON: a report may quote a program
// name, a path or a log line), and published whole.
func (p Policy) WriteJSON(path string, v any) error {
	doc, err := output.MarshalJSON(v)
	if err != nil {
		return err
	}
	return p.Write(path, scrubbed(doc))
}

// scrubbed returns doc with its secrets withheld, indented as the exporter
// indents.
func scrubbed(doc []byte) []byte {
	s := secret.ScrubJSON(doc)
	if len(s) == len(doc) && bytes.Equal(s, doc) {
		return doc
	}
	var b bytes.Buffer
	if json.Indent(&b, s, "", "  ") != nil {
		return s
	}
	b.WriteByte('\n')
	return safetext.EscapeJSON(b.Bytes())
}
