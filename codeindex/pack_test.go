package codeindex

import (
	"reflect"
	"slices"
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
			f.each(func(rec *symRec, depth int) { got = append(got, rec.name+"@"+string(rune('0'+depth))) })
			if !reflect.DeepEqual(got, want) {
				t.Errorf("each = %v, want %v", got, want)
			}
		})
	}
}

// TestPackRecords: the record encoding keeps every field, in the cases its
// shortcuts do not cover: a name outside its detail, an empty name, lines
// going back, an end before the start, containers met again later, and
// numbers past a varint's first byte.
func TestPackRecords(t *testing.T) {
	long := strings.Repeat("x", 70_000)
	syms := []Symbol{
		{Name: "A", Kind: "struct", Line: 10, Column: 3, EndLine: 20, EndColumn: 2, Container: "pkg", Detail: "type A struct", Children: []Symbol{
			{Name: "f", Kind: "field", Line: 11, Column: 2, EndLine: 11, EndColumn: 9, Container: "A", Detail: "f int"},
			{Name: "g", Kind: "field", Line: 12, Column: 2, EndLine: 12, EndColumn: 9, Container: "A", Detail: "other"},
		}},
		{Name: "", Kind: "heading", Line: 5, Column: 300_000, EndLine: 0, EndColumn: 1 << 30, Container: "pkg"},
		{Name: "B", Kind: "new kind", Line: 1 << 20, Column: 1, EndLine: 1<<20 + 3, Container: "A", Detail: long},
		{Name: long, Kind: "function", Line: 2, Column: 1, Container: "pkg", Detail: "func B()"},
		{Name: "C", Kind: "function", Line: 3, Column: 1, Container: "A"},
	}
	for i := range syms {
		syms[i].Path = "/w/x.go"
		for j := range syms[i].Children {
			syms[i].Children[j].Path = "/w/x.go"
		}
	}
	f := packFile("go", syms)
	want := slices.Clone(syms)
	want[2].Detail = long[:65535]
	want[3].Name = long[:65535]
	if got := f.symbols("/w/x.go"); !reflect.DeepEqual(got, want) {
		t.Errorf("unpacked:\n%+v\nwant:\n%+v", got, want)
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
