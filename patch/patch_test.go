package patch

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/agentls/agentls/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite the expected sections of testdata/*.txtar")

// Each testdata/NAME.txtar is a case: "patch" is the envelope; "parsed" is
// what Parse reads from it (or "error:" and its error). With a "before"
// section the patch's first operation (an Update) is applied to it:
// "after" is the new text and "matches" how each chunk matched, or
// "apply-error" lists the chunks that do not apply. -update rewrites the
// expected sections.
func TestCases(t *testing.T) {
	t.Parallel()
	for _, c := range testenv.Txtars(t, "testdata/*.txtar") {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			sec := c.Sections()
			if _, ok := sec["patch"]; !ok {
				t.Fatal("no patch section")
			}
			got := map[string]string{}
			files, err := Parse(sec["patch"])
			if err != nil {
				got["parsed"] = "error: " + err.Error() + "\n"
			} else {
				got["parsed"] = dump(files)
			}
			if before, ok := sec["before"]; ok {
				if len(files) == 0 || files[0].Kind != Update {
					t.Fatal("a case with a before section needs a patch whose first operation is an Update")
				}
				after, matches, fails := Apply(before, files[0].Chunks)
				if len(fails) > 0 {
					var b strings.Builder
					for _, f := range fails {
						b.WriteString(f.Error() + "\n")
					}
					got["apply-error"] = b.String()
					if after != before {
						t.Errorf("a failed Apply changed the text")
					}
				} else {
					got["after"] = after
					var b strings.Builder
					for i, m := range matches {
						fmt.Fprintf(&b, "chunk %d: %v\n", i+1, m)
					}
					got["matches"] = b.String()
				}
			}
			if *update {
				out := &txtar.Archive{Comment: c.Archive.Comment}
				for _, f := range c.Archive.Files {
					if f.Name == "patch" || f.Name == "before" {
						out.Files = append(out.Files, f)
					}
				}
				for _, name := range []string{"parsed", "after", "matches", "apply-error"} {
					if v, ok := got[name]; ok {
						out.Files = append(out.Files, txtar.File{Name: name, Data: []byte(v)})
					}
				}
				if err := os.WriteFile(c.Path, txtar.Format(out), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			for _, name := range []string{"parsed", "after", "matches", "apply-error"} {
				want, wok := sec[name]
				have, hok := got[name]
				if wok != hok || want != have {
					t.Errorf("%s:\n got (present %v):\n%s\nwant (present %v):\n%s", name, hok, have, wok, want)
				}
			}
		})
	}
}

// dump prints parsed operations one field a line.
func dump(files []File) string {
	var b strings.Builder
	for _, f := range files {
		fmt.Fprintf(&b, "%v %q (line %d)\n", f.Kind, f.Path, f.Line)
		if f.MoveTo != "" {
			fmt.Fprintf(&b, "  move to %q\n", f.MoveTo)
		}
		if f.Kind == Add {
			fmt.Fprintf(&b, "  text %q\n", f.Text)
		}
		for _, c := range f.Chunks {
			fmt.Fprintf(&b, "  chunk (line %d) context %q eof %v\n", c.Line, c.Context, c.EOF)
			fmt.Fprintf(&b, "    old %q\n    new %q\n", c.Old, c.New)
		}
	}
	return b.String()
}

func TestIs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		text string
		want bool
	}{
		{"*** Begin Patch\n*** End Patch\n", true},
		{"\n\n   *** Begin Patch  \n", true},
		{"<<'EOF'\n*** Begin Patch\n*** End Patch\nEOF\n", true},
		{"--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n", false},
		{"", false},
		{"<<'EOF'\n", false},
	} {
		if got := Is(tc.text); got != tc.want {
			t.Errorf("Is(%q) = %v, want %v", tc.text, got, tc.want)
		}
	}
}

// FuzzParseApply checks that no input makes Parse or Apply panic, and that
// Apply either fails without a change or returns text ending in a newline.
func FuzzParseApply(f *testing.F) {
	for _, c := range testenv.Txtars(f, "testdata/*.txtar") {
		sec := c.Sections()
		f.Add(sec["patch"], sec["before"])
	}
	f.Fuzz(func(t *testing.T, patch, before string) {
		files, err := Parse(patch)
		if err != nil {
			return
		}
		for _, fl := range files {
			after, _, fails := Apply(before, fl.Chunks)
			if len(fails) > 0 && after != before {
				t.Fatalf("failed Apply changed the text")
			}
			if len(fails) == 0 && after != "" && !strings.HasSuffix(after, "\n") {
				t.Fatalf("Apply returned %q without a final newline", after)
			}
		}
	})
}
