package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/cache"
)

// TestLeaderCacheDeclaresEveryMethod (issue 38): leaderCache declares every method of
// cache.Cache itself, and embeds nothing that could supply one. An embedded cache.Cache
// (leadercache.go before issue 38) would serve any method that controller-runtime adds to
// the interface from every replica's cache, routing nothing to the leader's: this test fails
// then, and so does a method that is missing (the file does not build: the assertion
// `var _ cache.Cache = (*leaderCache)(nil)` in leadercache.go).
func TestLeaderCacheDeclaresEveryMethod(t *testing.T) {
	typ := reflect.TypeFor[leaderCache]()
	for i := range typ.NumField() {
		if f := typ.Field(i); f.Anonymous {
			t.Errorf("leaderCache embeds %s: a method of cache.Cache that it does not declare would bypass its routing", f.Type)
		}
	}

	// The methods declared in leadercache.go with a *leaderCache receiver.
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "leadercache.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	declared := map[string]bool{}
	for _, d := range file.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Recv == nil || len(fn.Recv.List) != 1 {
			continue
		}
		if star, ok := fn.Recv.List[0].Type.(*ast.StarExpr); ok {
			if id, ok := star.X.(*ast.Ident); ok && id.Name == "leaderCache" {
				declared[fn.Name.Name] = true
			}
		}
	}
	iface := reflect.TypeFor[cache.Cache]()
	if iface.NumMethod() == 0 {
		t.Fatal("cache.Cache has no methods: the test reads the wrong type")
	}
	for i := range iface.NumMethod() {
		if m := iface.Method(i); !declared[m.Name] {
			t.Errorf("leaderCache does not declare %s of cache.Cache: route it to the leader's cache or to every replica's, explicitly", m.Name)
		}
	}
}
