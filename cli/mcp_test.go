package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMCPCommand runs `agentls mcp` through Main: its flags, and one
// session over pipes that ends with exit 0 when the client closes stdin.
func TestMCPCommand(t *testing.T) {
	for _, v := range []string{"XDG_CONFIG_HOME", "XDG_STATE_HOME", "HOME"} {
		t.Setenv(v, t.TempDir())
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"mcp", "--root", filepath.Join(t.TempDir(), "missing")}, "is not a directory"},
		{[]string{"mcp", "extra"}, "unexpected arguments"},
		{[]string{"mcp", "--bogus"}, "flag provided but not defined"},
	} {
		var stderr strings.Builder
		if code := Main(context.Background(), tc.args, IO{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &stderr}); code != exitUsage || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%q: exit %d, stderr %q", tc.args, code, stderr.String())
		}
	}

	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- Main(context.Background(), []string{"mcp", "--root", root}, IO{Stdin: inR, Stdout: outW, Stderr: io.Discard})
		outW.Close()
	}()
	br := bufio.NewReader(outR)
	send := func(msg string) map[string]any {
		t.Helper()
		if _, err := io.WriteString(inW, msg+"\n"); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(msg, `"id"`) {
			return nil
		}
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		return m
	}
	if m := send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`); m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	m := send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"a.txt"}}}`)
	if b, _ := json.Marshal(m); !strings.Contains(string(b), `hello`) || strings.Contains(string(b), `"isError":true`) {
		t.Errorf("read_file: %s", b)
	}
	inW.Close()
	select {
	case code := <-done:
		if code != exitOK {
			t.Errorf("exit %d after stdin closed", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("agentls mcp did not end when stdin closed")
	}
}

// TestPollableStdin: a pipe or a socket of its own becomes a reader on
// the poller that reads what was written and ends at its end; a socket that
// is stdout too, a file and a non-file stay as they are.
func TestPollableStdin(t *testing.T) {
	pipe := func(t *testing.T) (in, out *os.File, w io.WriteCloser) {
		var fds [2]int
		if err := syscall.Pipe(fds[:]); err != nil { // blocking, as a process's stdin is given
			t.Fatal(err)
		}
		return os.NewFile(uintptr(fds[0]), "in"), os.Stdout, os.NewFile(uintptr(fds[1]), "w")
	}
	socket := func(t *testing.T) (in, out *os.File, w io.WriteCloser) {
		fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
		if err != nil {
			t.Fatal(err)
		}
		return os.NewFile(uintptr(fds[0]), "in"), os.Stdout, os.NewFile(uintptr(fds[1]), "peer")
	}
	for _, tc := range []struct {
		name   string
		open   func(t *testing.T) (in, out *os.File, w io.WriteCloser)
		polled bool
	}{
		{"pipe", pipe, true},
		{"socket", socket, runtime.GOOS == "linux" || runtime.GOOS == "darwin"},
		{"socket both ways", func(t *testing.T) (*os.File, *os.File, io.WriteCloser) {
			in, _, w := socket(t)
			return in, in, w
		}, false},
		{"file", func(t *testing.T) (*os.File, *os.File, io.WriteCloser) {
			f, err := os.Create(filepath.Join(t.TempDir(), "in"))
			if err != nil {
				t.Fatal(err)
			}
			return f, os.Stdout, f
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, out, w := tc.open(t)
			got, polled := pollableStdin(IO{Stdin: in, Stdout: out})
			if polled != tc.polled {
				t.Fatalf("polled %v, want %v", polled, tc.polled)
			}
			if !polled {
				if got.Stdin != io.Reader(in) {
					t.Fatalf("stdin replaced by %T", got.Stdin)
				}
				in.Close()
				return
			}
			if runtime.GOOS == "linux" && tc.name == "pipe" {
				// The process's own description stays blocking.
				if fl, err := fcntlFlags(in); err != nil || fl&syscall.O_NONBLOCK != 0 {
					t.Fatalf("the given pipe's flags %#x (%v): made non-blocking", fl, err)
				}
				f, _ := got.Stdin.(bothCloser).ReadCloser.(*os.File)
				if fl, err := fcntlFlags(f); err != nil || fl&syscall.O_NONBLOCK == 0 {
					t.Fatalf("the pipe read through %T, flags %#x (%v): not non-blocking", f, fl, err)
				}
			}
			go func() {
				io.WriteString(w, "one line\n")
				w.Close()
			}()
			data, err := io.ReadAll(got.Stdin)
			if err != nil || string(data) != "one line\n" {
				t.Fatalf("read %q, %v", data, err)
			}
			if err := got.Stdin.(io.Closer).Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := in.Stat(); err == nil {
				t.Fatal("the given stdin is still open")
			}
		})
	}
}

func fcntlFlags(f *os.File) (int, error) {
	raw, err := f.SyscallConn()
	if err != nil {
		return 0, err
	}
	var fl uintptr
	var errno syscall.Errno
	raw.Control(func(fd uintptr) {
		fl, _, errno = syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0)
	})
	if errno != 0 {
		return 0, errno
	}
	return int(fl), nil
}
