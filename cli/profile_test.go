package cli

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCPUProfile: --cpuprofile writes a CPU profile (gzipped protocol
// buffers, as go tool pprof reads them) of a one-shot call and of an LSP
// and an MCP server that stop at the end of their input; a file that cannot be made is a usage
// error. Not parallel: a process has one CPU profile at a time.
func TestCPUProfile(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		code int
	}{
		{"call", []string{"call", "get_current_directory", "{}", "--root", dir, "--approve", "no"}, exitOK},
		// Input that ends without shutdown and exit: 1, as LSP says.
		{"serve", []string{"serve"}, 1},
		{"mcp", []string{"mcp", "--standalone", "--root", dir}, exitOK},
		{"no such directory", []string{"call", "get_current_directory", "--root", dir}, exitUsage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, tc.name+".pprof")
			if tc.code == exitUsage {
				out = filepath.Join(dir, "missing", "cpu.pprof")
			}
			var stdout, stderr bytes.Buffer
			code := Main(context.Background(), append(tc.args, "--cpuprofile", out), IO{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr})
			if code != tc.code {
				t.Fatalf("exit %d, want %d: %s%s", code, tc.code, stdout.String(), stderr.String())
			}
			if tc.code == exitUsage {
				if !strings.Contains(stderr.String(), "--cpuprofile") {
					t.Errorf("the error does not name the flag: %s", stderr.String())
				}
				return
			}
			f, err := os.Open(out)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			z, err := gzip.NewReader(f)
			if err != nil {
				t.Fatalf("not a profile: %v", err)
			}
			if data, err := io.ReadAll(z); err != nil || len(data) == 0 {
				t.Fatalf("not a profile: %d bytes, %v", len(data), err)
			}
		})
	}
}
