package tools

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"testing"

	"golang.org/x/tools/txtar"
)

var update = flag.Bool("update", false, "rewrite golden files")

// TestExportFormats keeps the definitions of two tools in every format in a
// txtar golden file (testdata/formats.txtar; -update rewrites it).
func TestExportFormats(t *testing.T) {
	t.Parallel()
	const golden = "testdata/formats.txtar"
	reg := NewRegistry(nil)
	reg.MustRegister(ReadFile, CurrentDirectory)
	ar := &txtar.Archive{Comment: []byte("Tool definitions in each export format. Regenerate: go test ./tools -run ExportFormats -update\n")}
	for _, f := range Formats {
		defs, err := Export(reg.List(nil), f)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.MarshalIndent(defs, "", "  ")
		var back []map[string]any
		if err := json.Unmarshal(b, &back); err != nil || len(back) != 2 {
			t.Fatalf("%s: not a JSON array of two definitions: %v", f, err)
		}
		ar.Files = append(ar.Files, txtar.File{Name: f + ".json", Data: append(b, '\n')})
	}
	if _, err := Export(nil, "yaml"); err == nil {
		t.Error("unknown format accepted")
	}
	got := txtar.Format(ar)
	if *update {
		os.MkdirAll("testdata", 0o755)
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("definitions differ from %s (run with -update after checking):\n%s", golden, got)
	}
}

// TestTextEditorAsAnthropicBuiltin: in the anthropic format the text
// editor is declared as Anthropic's own tool type; elsewhere in full.
func TestTextEditorAsAnthropicBuiltin(t *testing.T) {
	t.Parallel()
	reg := NewRegistry(nil)
	reg.MustRegister(TextEditor)
	tl, _ := reg.Lookup("str_replace_based_edit_tool")
	got, err := Export([]*Tool{tl}, "anthropic")
	if err != nil || fmt.Sprint(got) != "[map[name:str_replace_based_edit_tool type:text_editor_20250728]]" {
		t.Errorf("anthropic: %v, %v", got, err)
	}
	if d, _ := Export([]*Tool{tl}, "agentls"); len(d) != 1 || len(d[0].(Definition).InputSchema) == 0 {
		t.Errorf("agentls: %v", d)
	}
}
