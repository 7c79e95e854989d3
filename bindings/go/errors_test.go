package capstan_test

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	capstan "github.com/capstan-rt/capstan/bindings/go"
)

// A Registry is an io.Closer (a compile-time check).
var _ io.Closer = (*capstan.Registry)(nil)

// goStatuses reads errors.go: the C status each Status constant is declared
// as (C.CAPSTAN_ERR_X -> "ErrX").
func goStatuses(t *testing.T) map[string]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "errors.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	ast.Inspect(f, func(n ast.Node) bool {
		spec, ok := n.(*ast.ValueSpec)
		if !ok || len(spec.Values) != len(spec.Names) {
			return true
		}
		if typ, ok := spec.Type.(*ast.Ident); !ok || typ.Name != "Status" {
			return true
		}
		for i, v := range spec.Values {
			if sel, ok := v.(*ast.SelectorExpr); ok {
				if x, ok := sel.X.(*ast.Ident); ok && x.Name == "C" {
					out[sel.Sel.Name] = spec.Names[i].Name
				}
			}
		}
		return true
	})
	return out
}

// Every status has an exported Status value named after it (CAPSTAN_ERR_X:
// ErrX), both every status the linked library names and every status of
// include/capstan.h, so that errors.Is(err, capstan.ErrX) can be written
// for each.
func TestEveryStatusHasAnErrValue(t *testing.T) {
	declared := goStatuses(t)
	if len(declared) < 20 {
		t.Fatalf("errors.go declares only %d statuses: the parse found the wrong thing", len(declared))
	}
	want := func(cName, from string) {
		goName, ok := declared[cName]
		if !ok {
			t.Errorf("%s (%s) has no Status value in errors.go", cName, from)
			return
		}
		wantName := "StatusOK"
		if rest, ok := strings.CutPrefix(cName, "CAPSTAN_ERR_"); ok {
			wantName = "Err"
			for _, w := range strings.Split(rest, "_") {
				switch w {
				case "UTF8", "MCP":
					wantName += w
				default:
					wantName += w[:1] + strings.ToLower(w[1:])
				}
			}
		}
		if goName != wantName {
			t.Errorf("%s is declared as %s, want %s", cName, goName, wantName)
		}
	}
	named := 0
	for code := range 256 {
		name := capstan.Status(code).Error()
		if name == "CAPSTAN_UNKNOWN_STATUS" {
			continue
		}
		named++
		want(name, "the library's status "+strconv.Itoa(code))
	}
	if named < 20 {
		t.Fatalf("the library names only %d statuses", named)
	}
	header, err := os.ReadFile("../../include/capstan.h")
	if errors.Is(err, os.ErrNotExist) {
		t.Log("no ../../include/capstan.h (not in the checkout): checked the library's statuses only")
		return
	} else if err != nil {
		t.Fatal(err)
	}
	defs := regexp.MustCompile(`(?m)^#define (CAPSTAN_(?:OK|ERR_[A-Z0-9_]+)) (\d+)$`).FindAllSubmatch(header, -1)
	if len(defs) < 20 {
		t.Fatalf("found only %d statuses in capstan.h", len(defs))
	}
	for _, d := range defs {
		want(string(d[1]), "capstan.h")
		if code, _ := strconv.Atoi(string(d[2])); capstan.Status(code).Error() != string(d[1]) {
			t.Errorf("capstan.h says %s is %d; the library names %d %s", d[1], code, code, capstan.Status(code).Error())
		}
	}
}
