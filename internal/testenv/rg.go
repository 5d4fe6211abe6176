package testenv

import (
	"bytes"
	"os/exec"
	"testing"
)

// RgLines runs ripgrep (rg, on PATH) in dir with args and returns the
// "path:line" of every line it prints; no match is an empty set, any
// other failure fails the test. Its warnings (a binary file's search
// stopped after a match) are not lines.
func RgLines(t testing.TB, dir string, args ...string) map[string]bool {
	t.Helper()
	cmd := exec.Command("rg", append([]string{"--null", "--line-number", "--no-heading", "--color=never"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		if e, ok := err.(*exec.ExitError); !ok || e.ExitCode() != 1 {
			t.Fatalf("rg %v: %v", args, err)
		}
	}
	set := map[string]bool{}
	for _, line := range bytes.Split(out, []byte{'\n'}) {
		path, rest, ok := bytes.Cut(line, []byte{0})
		if !ok {
			continue
		}
		n, _, _ := bytes.Cut(rest, []byte{':'})
		set[string(path)+":"+string(n)] = true
	}
	return set
}
