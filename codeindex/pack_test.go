package codeindex

import (
	"reflect"
	"strings"
	"testing"
)

// TestPackFile: a packed outline unpacks to the outline it was packed from,
// children and all, and each visits it in pre-order with the right depths.
func TestPackFile(t *testing.T) {
	for _, tc := range []struct{ name, path, src string }{
		{"go", "/w/a.go", "package a\n\n// T is.\ntype T struct {\n\tA, B int\n\tio.Reader\n}\n\ntype I interface{ M(x int) error }\n\nfunc (t *T) M(x int) error { return nil }\n\nconst (\n\tC = 1\n\tD = \"d\"\n)\n\nvar V = map[string]int{\"a\": 1}\n"},
		{"python", "/w/a.py", "class A:\n    def m(self):\n        pass\n\n    class B:\n        def n(self): pass\n\ndef f():\n    return 1\n"},
		{"markdown", "/w/a.md", "# One\n\n## Two\n\ntext\n\n# Three\n"},
		{"empty", "/w/b.go", "package b\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lang, syms := outline(tc.path, []byte(tc.src))
			if lang == "" {
				t.Fatalf("no language for %s", tc.path)
			}
			f := packFile(lang, syms)
			if got := f.symbols(tc.path); !reflect.DeepEqual(got, syms) {
				t.Errorf("unpacked:\n%+v\nwant:\n%+v", got, syms)
			}
			if f.nsyms() != countSymbols(syms) {
				t.Errorf("nsyms = %d, want %d", f.nsyms(), countSymbols(syms))
			}
			var want []string
			var flat func([]Symbol, int)
			flat = func(ss []Symbol, depth int) {
				for _, s := range ss {
					want = append(want, s.Name+"@"+string(rune('0'+depth)))
					flat(s.Children, depth+1)
				}
			}
			flat(syms, 0)
			var got []string
			f.each(func(i, depth int) { got = append(got, f.name(i)+"@"+string(rune('0'+depth))) })
			if !reflect.DeepEqual(got, want) {
				t.Errorf("each = %v, want %v", got, want)
			}
		})
	}
}

// TestCollapseSpace: collapseSpace is strings.Join(strings.Fields(s), " ").
func TestCollapseSpace(t *testing.T) {
	for _, s := range []string{
		"", " ", "a", "  a  ", "func (t *T)\n\tM(x int,\n\ty int) error", "a\u00a0b\u0085c\u2003 d", "\xff \xfe\tx", "é  ü\n\n", "a\v\fb\r\n",
	} {
		if got, want := collapseSpace([]byte(s)), strings.Join(strings.Fields(s), " "); got != want {
			t.Errorf("collapseSpace(%q) = %q, want %q", s, got, want)
		}
	}
}
