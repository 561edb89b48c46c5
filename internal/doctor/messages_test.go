package doctor

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/devctl/devctl/internal/explain/i18n"
)

func byID(msgs []i18n.Message) map[string]i18n.Message {
	m := map[string]i18n.Message{}
	for _, msg := range msgs {
		m[msg.ID] = msg
	}
	return m
}

// TestEveryCheckHasItsTextsInBothLanguages holds the catalogue to the
// registry: a title per check, and per finding a detail (and a fix where
// there is one) in English and Polish naming the same placeholders.
func TestEveryCheckHasItsTextsInBothLanguages(t *testing.T) {
	en, pl := byID(messagesEN), byID(messagesPL)
	checks := map[string]bool{}
	for _, c := range All() {
		if checks[c.ID] {
			t.Errorf("duplicate check id %s", c.ID)
		}
		checks[c.ID] = true
		for lang, msgs := range map[string]map[string]i18n.Message{"English": en, "Polish": pl} {
			if m, ok := msgs[c.ID]; !ok || m.Title == "" || m.Detail != "" {
				t.Errorf("%s: needs a %s title and no detail under its id", c.ID, lang)
			}
		}
	}
	for id, e := range en {
		p, ok := pl[id]
		if !ok {
			t.Errorf("%s has no Polish text", id)
			continue
		}
		if checks[id] || strings.HasPrefix(id, "log.fact.") || strings.HasPrefix(id, "value.") {
			continue
		}
		owner, key, _ := strings.Cut(id, ".")
		if owner != "common" {
			owner, key = id[:strings.LastIndexByte(id, '.')], id[strings.LastIndexByte(id, '.')+1:]
		}
		if owner != "common" && !checks[owner] {
			t.Errorf("%s belongs to no check and is not common.<key>", id)
		}
		if key == "" || e.Title != "" || p.Title != "" || e.Detail == "" || p.Detail == "" {
			t.Errorf("%s: a finding needs a detail in English and Polish and no title", id)
		}
		if len(e.Fixes) > 1 || len(e.Fixes) != len(p.Fixes) {
			t.Errorf("%s: one fix or none, the same in both languages; got %d English, %d Polish", id, len(e.Fixes), len(p.Fixes))
			continue
		}
		if d := cmp.Diff(i18n.Placeholders(e.Detail), i18n.Placeholders(p.Detail)); d != "" {
			t.Errorf("%s: Polish detail names other placeholders (-en +pl):\n%s", id, d)
		}
		for i := range e.Fixes {
			if d := cmp.Diff(i18n.Placeholders(e.Fixes[i]), i18n.Placeholders(p.Fixes[i])); d != "" {
				t.Errorf("%s: Polish fix names other placeholders (-en +pl):\n%s", id, d)
			}
		}
		for _, s := range append([]string{e.Detail, p.Detail}, append(e.Fixes, p.Fixes...)...) {
			if strings.Count(s, "[[") != strings.Count(s, "]]") {
				t.Errorf("%s: unbalanced [[ ]] in %q", id, s)
			}
		}
	}
	for id := range pl {
		if _, ok := en[id]; !ok {
			t.Errorf("Polish %s has no English original", id)
		}
	}
}

// messageKeys reads the message keys the package's code names as string
// literals: Msg: "key" fields, skip("key", ...) and readEnv(e, "key", ...)
// calls, and msg = "key" assignments (nvidia.nvml_init picks its key from a
// switch).
func messageKeys(t *testing.T) map[string]string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]string{}
	fset := token.NewFileSet()
	add := func(e ast.Expr) {
		if bl, ok := e.(*ast.BasicLit); ok && bl.Kind == token.STRING {
			if s, err := strconv.Unquote(bl.Value); err == nil {
				keys[s] = fset.Position(bl.Pos()).String()
			}
		}
	}
	for _, fn := range files {
		if strings.HasSuffix(fn, "_test.go") || strings.HasPrefix(fn, "messages_") {
			continue
		}
		f, err := parser.ParseFile(fset, fn, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.KeyValueExpr:
				if id, ok := n.Key.(*ast.Ident); ok && id.Name == "Msg" {
					add(n.Value)
				}
			case *ast.CallExpr:
				if id, ok := n.Fun.(*ast.Ident); ok && id.Name == "skip" && len(n.Args) > 0 {
					add(n.Args[0])
				}
				if id, ok := n.Fun.(*ast.Ident); ok && id.Name == "readEnv" && len(n.Args) > 1 {
					add(n.Args[1])
				}
			case *ast.AssignStmt:
				if id, ok := n.Lhs[0].(*ast.Ident); ok && id.Name == "msg" && len(n.Rhs) == 1 {
					add(n.Rhs[0])
				}
			}
			return true
		})
	}
	return keys
}

// TestEveryMessageKeyInTheCodeHasAMessage catches a key the fixtures do not
// reach: each must name a check's message or a common one.
func TestEveryMessageKeyInTheCodeHasAMessage(t *testing.T) {
	keys := messageKeys(t)
	if len(keys) < 50 {
		t.Fatalf("found only %d message keys in the code; the scan is broken", len(keys))
	}
	have := map[string]bool{}
	for _, m := range messagesEN {
		if i := strings.LastIndexByte(m.ID, '.'); i > 0 && m.Detail != "" {
			have[m.ID[i+1:]] = true
		}
	}
	var missing []string
	for k, pos := range keys {
		if !have[k] {
			missing = append(missing, k+" ("+pos+")")
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("message keys with no message: %s", strings.Join(missing, ", "))
	}
}
