// Command typecheck type-checks Go packages from their source for the
// system of its environment (GOOS, GOARCH), as gopls does, without
// compiling them, and prints what does not check. Built for this system,
// it is run with the other's GOOS (`GOOS=windows go run` would build it
// for Windows):
//
//	go build -o typecheck ./scripts/typecheck
//	GOOS=windows ./typecheck ./cmd/agentls
//	GOOS=darwin ./typecheck -tests ./...
//
// scripts/cross-build.sh runs it for the systems no suite runs on: a
// compile for another system starts from an empty build cache and took
// 80 to 90 s of a cold run here for each, the type check 7 to 8 s. It
// checks what the compiler's type checker checks, not what only the
// assembler or the linker would find.
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"

	"golang.org/x/tools/go/packages"
)

func main() {
	tests := flag.Bool("tests", false, "check the packages' tests too")
	flag.Parse()
	cfg := &packages.Config{
		Mode:  packages.NeedName | packages.NeedTypes | packages.NeedSyntax | packages.NeedImports | packages.NeedDeps,
		Tests: *tests,
	}
	pkgs, err := packages.Load(cfg, flag.Args()...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "typecheck:", err)
		os.Exit(2)
	}
	if packages.PrintErrors(pkgs) > 0 {
		os.Exit(1)
	}
	n := 0
	packages.Visit(pkgs, nil, func(*packages.Package) { n++ })
	fmt.Printf("%s: %d packages type-check (those named and their dependencies)\n", system(), n)
}

// system is the GOOS/GOARCH the packages were checked for.
func system() string {
	goos, goarch := os.Getenv("GOOS"), os.Getenv("GOARCH")
	if goos == "" {
		goos = runtime.GOOS
	}
	if goarch == "" {
		goarch = runtime.GOARCH
	}
	return goos + "/" + goarch
}
