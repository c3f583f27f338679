package ours_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// There is one "ours and not writable by others" rule, and it is this package's: the module's
// non-test Go elsewhere may not read a file's owner from what Stat found (a
// `.Sys().(*syscall.Stat_t)` assertion), compare a Uid field with the process's own uid, or
// mask a mode with an octal literal of group and other bits (0o022, 0o002, 0o044, …): each is
// how a copy of the rule starts. The simulator (resmonsim) is left out, since it shares no
// code with the gateway on purpose.
func TestNoOtherCopyOfTheRule(t *testing.T) {
	root := moduleRoot(t)
	fset := token.NewFileSet()
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			switch {
			case rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata"),
				rel == "ours", rel == "resmonsim":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		checked++
		ast.Inspect(f, func(n ast.Node) bool {
			if why := copyOfTheRule(n); why != "" {
				t.Errorf("%s: %s; use package ours (ours.File, ours.Judge, ours.Owner, ours.Mine)", fset.Position(n.Pos()), why)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 50 {
		t.Fatalf("only %d Go files checked under %s", checked, root)
	}
}

// copyOfTheRule says why n is the start of a copy of the rule, or "".
func copyOfTheRule(n ast.Node) string {
	switch n := n.(type) {
	case *ast.TypeAssertExpr:
		if star, ok := n.Type.(*ast.StarExpr); ok && isSelector(star.X, "syscall", "Stat_t") {
			return "reads a file's owner from a syscall.Stat_t"
		}
	case *ast.BinaryExpr:
		switch n.Op {
		case token.EQL, token.NEQ:
			if mentions(n.X, isUidField) && mentions(n.Y, isOwnUID) || mentions(n.Y, isUidField) && mentions(n.X, isOwnUID) {
				return "compares a file's Uid with the process's own"
			}
		case token.AND, token.AND_NOT:
			if othersBits(n.X) || othersBits(n.Y) {
				return "masks a mode with group and other bits"
			}
		}
	}
	return ""
}

func isSelector(e ast.Expr, pkg, name string) bool {
	sel, ok := e.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != name {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	return ok && id.Name == pkg
}

func isUidField(n ast.Node) bool {
	sel, ok := n.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "Uid"
}

func isOwnUID(n ast.Node) bool {
	c, ok := n.(*ast.CallExpr)
	return ok && (isSelector(c.Fun, "os", "Getuid") || isSelector(c.Fun, "os", "Geteuid") ||
		isSelector(c.Fun, "syscall", "Getuid") || isSelector(c.Fun, "syscall", "Geteuid") ||
		isSelector(c.Fun, "unix", "Getuid") || isSelector(c.Fun, "unix", "Geteuid"))
}

func mentions(e ast.Expr, match func(ast.Node) bool) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		found = found || match(n)
		return !found
	})
	return found
}

// othersBits reports whether e is an octal literal of group and other bits only (0o022,
// 0o002, 0o044, 0o077, …): a mask that asks what others may do with a file.
func othersBits(e ast.Expr) bool {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.INT || !octal(lit.Value) {
		return false
	}
	v, err := strconv.ParseUint(strings.ReplaceAll(lit.Value, "_", ""), 0, 32)
	return err == nil && v != 0 && v&^0o077 == 0
}

func octal(lit string) bool {
	l := strings.ToLower(lit)
	return strings.HasPrefix(l, "0o") || len(l) > 1 && l[0] == '0' && l[1] >= '0' && l[1] <= '7'
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			t.Fatal("no go.mod above the package")
		}
		dir = up
	}
}
