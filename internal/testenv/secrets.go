package testenv

import (
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
)

// Secret is one entry of redact/testdata/secrets.txtar: a text in the
// shape of a real one (Shape names it) and the secret in it.
type Secret struct {
	Shape, Text, Secret string
}

// marked is how the corpus marks the secret in its text: {{secret}}.
var marked = regexp.MustCompile(`(?s)\{\{(.*?)\}\}`)

// Secrets reads the corpus of secret shapes, redact/testdata/secrets.txtar,
// which the redaction tests of every layer (the redact package, the tools,
// the server binary) must keep out of logs and events.
func Secrets(t testing.TB) []Secret {
	t.Helper()
	_, self, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("testenv: no source path")
	}
	a, err := txtar.ParseFile(filepath.Join(filepath.Dir(self), "..", "..", "redact", "testdata", "secrets.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	var out []Secret
	for _, f := range a.Files {
		text := strings.TrimSuffix(string(f.Data), "\n")
		m := marked.FindStringSubmatch(text)
		if m == nil {
			t.Fatalf("%s: no {{secret}}", f.Name)
		}
		out = append(out, Secret{Shape: f.Name, Text: strings.Replace(text, m[0], m[1], 1), Secret: m[1]})
	}
	return out
}
