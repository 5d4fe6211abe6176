package listen

import (
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/internal/testenv"
)

// The test binary doubles as a client of another user for the peer-uid
// test.
func TestMain(m *testing.M) { testenv.PeerMain(m) }

func TestTCPLoopbackOnly(t *testing.T) {
	testenv.RuntimeDir(t)
	for _, tc := range []struct {
		addr   string
		remote bool
		ok     bool
	}{
		{"127.0.0.1:0", false, true},
		{"tcp:127.0.0.1:0", false, true},
		{"localhost:0", false, true},
		{"127.0.0.2:0", false, true},
		{"0.0.0.0:0", false, false},
		{":0", false, false},
		{"[::]:0", false, false},
		{"192.0.2.1:7700", false, false},
		{"example.com:7700", false, false},
		{"no-port", false, false},
		{"0.0.0.0:0", true, true},
	} {
		l, err := Listen(tc.addr, Options{AllowRemote: tc.remote})
		if (err == nil) != tc.ok {
			t.Errorf("Listen(%q, remote=%v): err %v, want ok=%v", tc.addr, tc.remote, err, tc.ok)
		}
		if err != nil {
			if !tc.ok && !tc.remote && strings.Contains(tc.addr, ":0") && tc.addr != "no-port" && !strings.Contains(err.Error(), "--allow-remote") {
				t.Errorf("Listen(%q): %v, want it to name --allow-remote", tc.addr, err)
			}
			continue
		}
		if a := l.Addr().(*net.TCPAddr); !tc.remote && !a.IP.IsLoopback() {
			t.Errorf("Listen(%q) bound %s", tc.addr, a)
		}
		l.Close()
	}
}

func TestGeneratedToken(t *testing.T) {
	xdg := testenv.RuntimeDir(t)
	l1, err := Listen("127.0.0.1:0", Options{})
	if err != nil {
		t.Fatal(err)
	}
	l2, err := Listen("127.0.0.1:0", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	dir := filepath.Join(xdg, "agentls")
	if filepath.Dir(l1.TokenFile) != dir {
		t.Errorf("token file %s, want it in %s", l1.TokenFile, dir)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("token dir: %v %v, want mode 700", fi.Mode(), err)
	}
	fi, err := os.Stat(l1.TokenFile)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v, want mode 600 (%v)", fi.Mode(), err)
	}
	b, _ := os.ReadFile(l1.TokenFile)
	if strings.TrimSpace(string(b)) != l1.Token || len(l1.Token) != 64 {
		t.Errorf("token file holds %q, token %q", b, l1.Token)
	}
	if l1.Token == l2.Token || l1.TokenFile == l2.TokenFile {
		t.Error("two listeners share a token or its file")
	}
	if !TokenMatches(l1.Token, l1.Token) || TokenMatches(l2.Token, l1.Token) || TokenMatches("", "") || TokenMatches(l1.Token[:63], l1.Token) {
		t.Error("TokenMatches is wrong")
	}
	l1.Close()
	if _, err := os.Stat(l1.TokenFile); !os.IsNotExist(err) {
		t.Errorf("token file left after Close: %v", err)
	}
}

// asRoot skips tests that need to create files of another user.
func asRoot(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to make files of another uid")
	}
}

func TestTokenDirRefused(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		setup      func(t *testing.T, dir string)
	}{
		{"group-readable", "mode 750", func(t *testing.T, dir string) { os.Mkdir(dir, 0o750); os.Chmod(dir, 0o750) }},
		{"world-writable", "mode 777", func(t *testing.T, dir string) { os.Mkdir(dir, 0o777); os.Chmod(dir, 0o777) }},
		{"a file", "not a directory", func(t *testing.T, dir string) { os.WriteFile(dir, nil, 0o600) }},
		{"a symlink", "not a directory", func(t *testing.T, dir string) { os.Symlink(t.TempDir(), dir) }},
		{"another user's", "belongs to uid 65534", func(t *testing.T, dir string) {
			asRoot(t)
			os.Mkdir(dir, 0o700)
			os.Chown(dir, 65534, 65534)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			xdg := testenv.RuntimeDir(t)
			tc.setup(t, filepath.Join(xdg, "agentls"))
			l, err := Listen("127.0.0.1:0", Options{})
			if err == nil {
				l.Close()
				t.Fatal("listened with a token in an unsafe directory")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want it to say %q", err, tc.want)
			}
		})
	}
}

func TestTokenFile(t *testing.T) {
	testenv.RuntimeDir(t)
	dir := t.TempDir()
	good := strings.Repeat("k", 40)
	write := func(name, content string, mode fs.FileMode) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(content), mode)
		os.Chmod(p, mode)
		return p
	}
	p := write("ok", "  "+good+"\n", 0o600)
	l, err := Listen("127.0.0.1:0", Options{TokenFile: p})
	if err != nil {
		t.Fatal(err)
	}
	if l.Token != good || l.TokenFile != p {
		t.Errorf("token %q from %s", l.Token, l.TokenFile)
	}
	l.Close()
	if _, err := os.Stat(p); err != nil {
		t.Errorf("Close removed the user's token file: %v", err)
	}
	link := filepath.Join(dir, "link")
	os.Symlink(p, link)
	bad := []struct{ name, path, want string }{
		{"world-readable", write("wr", good, 0o644), "mode 644"},
		{"group-readable", write("gr", good, 0o640), "mode 640"},
		{"short", write("short", "abc", 0o600), "at least 16"},
		{"empty", write("empty", "", 0o600), "at least 16"},
		{"huge", write("huge", strings.Repeat("x", 5000), 0o600), "at most 4096"},
		{"missing", filepath.Join(dir, "missing"), "no such file"},
		{"directory", dir, "not a regular file"},
		{"symlink", link, "too many levels of symbolic links"},
	}
	if os.Getuid() == 0 {
		q := write("theirs", good, 0o600)
		os.Chown(q, 65534, 65534)
		bad = append(bad, struct{ name, path, want string }{"another user's", q, "belongs to uid 65534"})
	}
	for _, b := range bad {
		l, err := Listen("127.0.0.1:0", Options{TokenFile: b.path})
		if err == nil {
			l.Close()
			t.Errorf("%s token file accepted", b.name)
		} else if !strings.Contains(err.Error(), b.want) {
			t.Errorf("%s token file: %v, want it to say %q", b.name, err, b.want)
		}
	}
}

func TestUnixSocket(t *testing.T) {
	testenv.RuntimeDir(t)
	dir := filepath.Join(t.TempDir(), "run")
	sock := filepath.Join(dir, "agentls.sock")
	l, err := Listen("unix:"+sock, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("socket dir mode %v (%v), want 700", fi.Mode(), err)
	}
	fi, err := os.Lstat(sock)
	if err != nil || fi.Mode().Type() != fs.ModeSocket || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket %v (%v), want a socket of mode 600", fi.Mode(), err)
	}
	// A second server on the same path is refused; the first keeps it.
	if l2, err := Listen("unix:"+sock, Options{}); err == nil {
		l2.Close()
		t.Error("a second server took a socket in use")
	}
	// Every connection, the refused second server's probe in the queue too.
	testenv.AcceptEach(l, func(c net.Conn) {
		c.Write([]byte("hi"))
		c.Close()
	})
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	b, _ := io.ReadAll(c)
	c.Close()
	if string(b) != "hi" {
		t.Errorf("same-uid peer got %q, want hi", b)
	}
	l.Close()
	if _, err := os.Lstat(sock); !os.IsNotExist(err) {
		t.Errorf("socket left after Close: %v", err)
	}

	// A stale socket (no server) is replaced.
	ln, _ := net.Listen("unix", sock)
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	if l, err := Listen("unix:"+sock, Options{}); err != nil {
		t.Errorf("stale socket: %v", err)
	} else {
		l.Close()
	}
}

func TestUnixSocketDirRefused(t *testing.T) {
	testenv.RuntimeDir(t)
	// Each case is refused for its own reason, which the error names.
	why := map[string]string{
		"world-writable dir": "has mode 777: others may write",
		"group-writable dir": "has mode 770: others may write",
		"symlinked dir":      "is not a directory (a symlink is refused)",
		"another user's dir": "belongs to uid 65534, not to this user",
		"path is a file":     "exists and is not a socket",
		"empty path":         "needs a path",
	}
	for name, setup := range map[string]func(t *testing.T, dir string) string{
		"world-writable dir": func(t *testing.T, dir string) string {
			os.Mkdir(dir, 0o777)
			os.Chmod(dir, 0o777)
			return filepath.Join(dir, "s")
		},
		"group-writable dir": func(t *testing.T, dir string) string {
			os.Mkdir(dir, 0o770)
			os.Chmod(dir, 0o770)
			return filepath.Join(dir, "s")
		},
		"symlinked dir": func(t *testing.T, dir string) string {
			os.Symlink(t.TempDir(), dir)
			return filepath.Join(dir, "s")
		},
		"another user's dir": func(t *testing.T, dir string) string {
			asRoot(t)
			os.Mkdir(dir, 0o700)
			os.Chown(dir, 65534, 65534)
			return filepath.Join(dir, "s")
		},
		"path is a file": func(t *testing.T, dir string) string {
			os.Mkdir(dir, 0o700)
			p := filepath.Join(dir, "s")
			os.WriteFile(p, []byte("keep me"), 0o600)
			return p
		},
		"empty path": func(t *testing.T, dir string) string { return "" },
	} {
		t.Run(name, func(t *testing.T) {
			path := setup(t, filepath.Join(t.TempDir(), "d"))
			if l, err := Listen("unix:"+path, Options{}); err == nil {
				l.Close()
				t.Fatal("listened")
			} else if !strings.Contains(err.Error(), why[name]) {
				t.Errorf("refused with %q, want the reason %q", err, why[name])
			}
			if name == "path is a file" {
				if b, _ := os.ReadFile(path); string(b) != "keep me" {
					t.Error("the file at the socket path was changed")
				}
			}
		})
	}
}

// TestUnixPeerOfAnotherUID connects from a process running as another uid
// (nobody, 65534; needs root to start it). With the socket's modes opened on
// purpose, SO_PEERCRED alone must refuse it; with the default modes the
// filesystem already does.
func TestUnixPeerOfAnotherUID(t *testing.T) {
	asRoot(t)
	testenv.RuntimeDir(t)
	dial := func(sock string) string {
		out, err := testenv.Nobody(t, testenv.PeerDial(sock, "hello")).CombinedOutput()
		if err != nil {
			t.Fatalf("child: %v %s", err, out)
		}
		return strings.TrimSpace(string(out))
	}

	base := t.TempDir()
	os.Chmod(base, 0o755)
	os.Chmod(filepath.Dir(base), 0o755)
	sockDir := filepath.Join(base, "run")
	sock := filepath.Join(sockDir, "s.sock")
	l, err := Listen("unix:"+sock, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	accepted := make(chan net.Conn, 4)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- c
		}
	}()

	// Default modes: the child cannot even connect.
	if out := dial(sock); !strings.Contains(out, "permission denied") {
		t.Errorf("other uid with default modes: %s, want permission denied", out)
	}
	// Modes opened: the child connects, and Accept closes it unseen.
	os.Chmod(sockDir, 0o777)
	os.Chmod(sock, 0o777)
	if out := dial(sock); !strings.HasPrefix(out, "read 0: ") || strings.Contains(out, "timeout") {
		t.Errorf("other uid with open modes: %s, want the connection closed at once", out)
	}
	select {
	case c := <-accepted:
		t.Fatalf("Accept returned the other uid's connection (%v)", c.RemoteAddr())
	case <-time.After(200 * time.Millisecond):
	}
	// The same uid still gets in.
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	select {
	case got := <-accepted:
		got.Close()
	case <-time.After(5 * time.Second):
		t.Fatal("the same uid's connection was not accepted")
	}
}
