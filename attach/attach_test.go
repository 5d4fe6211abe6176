package attach

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentls/agentls/internal/testenv"
)

// The test binary doubles as a process of another user for the peer tests.
func TestMain(m *testing.M) { testenv.PeerMain(m) }

// runtimeDir gives the test a runtime directory of its own.
func runtimeDir(t *testing.T) string {
	t.Helper()
	testenv.RuntimeDir(t)
	d, err := Dir()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func publish(t *testing.T, roots ...string) *Publication {
	t.Helper()
	p, err := Publish(roots, "test editor")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func TestPublishFiles(t *testing.T) {
	dir := runtimeDir(t)
	root := t.TempDir()
	p := publish(t, root)
	d := p.Descriptor
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("runtime dir mode %v %v", fi.Mode(), err)
	}
	for path, want := range map[string]os.FileMode{
		filepath.Join(dir, d.ID+".json"): 0o600,
		d.Socket:                         0o600,
		d.TokenFile:                      0o600,
	} {
		fi, err := os.Lstat(path)
		if err != nil || fi.Mode().Perm() != want || filepath.Dir(path) != dir {
			t.Errorf("%s: %v %v, want mode %o in %s", path, fi.Mode(), err, want, dir)
		}
	}
	if d.PID != os.Getpid() || d.Editor != "test editor" || len(d.Roots) != 1 || d.Roots[0] != root {
		t.Errorf("descriptor %+v", d)
	}
	sessions, err := List()
	if err != nil || len(sessions) != 1 || sessions[0].ID != d.ID {
		t.Fatalf("List: %+v %v", sessions, err)
	}
	other := t.TempDir()
	if err := p.SetRoots([]string{root, other}); err != nil {
		t.Fatal(err)
	}
	if got, _, err := Find(other, ""); err != nil || got.ID != d.ID {
		t.Errorf("Find after SetRoots: %+v %v", got, err)
	}
	p.Close()
	for _, path := range []string{filepath.Join(dir, d.ID+".json"), d.Socket, d.TokenFile} {
		if _, err := os.Lstat(path); !os.IsNotExist(err) {
			t.Errorf("%s left after Close: %v", path, err)
		}
	}
	if sessions, _ := List(); len(sessions) != 0 {
		t.Errorf("List after Close: %+v", sessions)
	}
}

// TestCloseConcurrent: a Close that finds another under way returns when
// that one has ended, not before: a signal handler's CloseAll, which exits
// the process next, races the session's own Close on shutdown, and
// returning early left the token file behind. The second closer is Close
// again or CloseAll, which must wait for a Close under way too (it did not
// when the publication left the live set before its files were gone:
// `go test -count 100` failed three times out of three).
func TestCloseConcurrent(t *testing.T) {
	runtimeDir(t)
	root := t.TempDir()
	for i := range 400 {
		p := publish(t, root)
		d := p.Descriptor
		var wg sync.WaitGroup
		start := make(chan struct{})
		for j := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				if j == 1 && i%2 == 1 {
					CloseAll()
				} else {
					p.Close()
				}
				for _, path := range []string{filepath.Join(filepath.Dir(d.Socket), d.ID+".json"), d.Socket, d.TokenFile} {
					if _, err := os.Lstat(path); !os.IsNotExist(err) {
						t.Errorf("%s left when Close returned: %v", path, err)
					}
				}
			}()
		}
		close(start)
		wg.Wait()
		reopen()
		if t.Failed() {
			return
		}
	}
}

// reopen lets the test publish again after CloseAll (a process's last act,
// after which Publish refuses).
func reopen() {
	live.Lock()
	live.ended = false
	live.Unlock()
}

// TestPublishRacingCloseAll: a Publish at the moment a signal handler's
// CloseAll runs is either closed by it or refused after it; when both have
// returned, nothing is left in the runtime directory. (When Publish added
// itself to the live set only once its files were made, CloseAll could
// pass it by and the process exit with its socket and token file.)
func TestPublishRacingCloseAll(t *testing.T) {
	dir := runtimeDir(t)
	root := t.TempDir()
	refused := 0
	for i := range 200 {
		var wg sync.WaitGroup
		start := make(chan struct{})
		var perr error
		wg.Add(2)
		go func() {
			defer wg.Done()
			<-start
			_, perr = Publish([]string{root}, "test editor")
		}()
		go func() {
			defer wg.Done()
			<-start
			time.Sleep(time.Duration(i) * 2 * time.Microsecond) // at every point of Publish
			CloseAll()
		}()
		close(start)
		wg.Wait()
		if perr != nil {
			if !errors.Is(perr, errEnded) {
				t.Fatalf("Publish: %v", perr)
			}
			refused++
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 0 {
			var names []string
			for _, e := range ents {
				names = append(names, e.Name())
			}
			t.Fatalf("left after Publish and CloseAll (Publish: %v): %v", perr, names)
		}
		reopen()
	}
	if refused == 0 || refused == 200 {
		t.Logf("%d of 200 refused: the race was run one way only", refused)
	}
	// After CloseAll, Publish refuses and makes nothing.
	CloseAll()
	defer reopen()
	if _, err := Publish([]string{root}, "test editor"); !errors.Is(err, errEnded) {
		t.Errorf("Publish after CloseAll: %v", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("Publish after CloseAll left %d entries", len(ents))
	}
}

func TestFindNested(t *testing.T) {
	runtimeDir(t)
	base := t.TempDir()
	outer := filepath.Join(base, "repo")
	inner := filepath.Join(outer, "sub", "module")
	sibling := filepath.Join(base, "repo-other") // shares a prefix, not a parent
	for _, d := range []string{inner, sibling} {
		os.MkdirAll(d, 0o755)
	}
	po, pi, ps := publish(t, outer), publish(t, inner), publish(t, sibling)
	for _, tc := range []struct {
		cwd, id, want string
	}{
		{outer, "", po.Descriptor.ID},
		{filepath.Join(outer, "sub"), "", po.Descriptor.ID},
		{inner, "", pi.Descriptor.ID},
		{filepath.Join(inner, "deep", "er"), "", pi.Descriptor.ID},
		{sibling, "", ps.Descriptor.ID},
		{inner, po.Descriptor.ID, po.Descriptor.ID}, // --session chooses
		{base, ps.Descriptor.ID, ps.Descriptor.ID},
		{base, "", ""},
		{"/", "", ""},
	} {
		d, _, err := Find(tc.cwd, tc.id)
		if tc.want == "" {
			if !errors.Is(err, ErrNoSession) {
				t.Errorf("Find(%s, %q) = %s %v, want ErrNoSession", tc.cwd, tc.id, d.ID, err)
			}
			continue
		}
		if err != nil || d.ID != tc.want {
			t.Errorf("Find(%s, %q) = %s %v, want %s", tc.cwd, tc.id, d.ID, err, tc.want)
		}
	}
	if _, _, err := Find(inner, "0123456789abcdef"); err == nil || !strings.Contains(err.Error(), "no editor session 0123456789abcdef") {
		t.Errorf("unknown id: %v", err)
	}
}

// A symlink inside a repository does not lead to another session: the
// working directory is matched as written first.
func TestFindSymlinkInRepo(t *testing.T) {
	runtimeDir(t)
	base := t.TempDir()
	repo, secret := filepath.Join(base, "repo"), filepath.Join(base, "secret")
	os.MkdirAll(repo, 0o755)
	os.MkdirAll(filepath.Join(secret, "x"), 0o755)
	if err := os.Symlink(secret, filepath.Join(repo, "link")); err != nil {
		t.Fatal(err)
	}
	pr, psec := publish(t, repo), publish(t, secret)
	d, _, err := Find(filepath.Join(repo, "link", "x"), "")
	if err != nil || d.ID != pr.Descriptor.ID {
		t.Errorf("cwd through the repository's symlink: %s %v, want the repository's session %s (not %s)", d.ID, err, pr.Descriptor.ID, psec.Descriptor.ID)
	}
	// A root opened through a symlink is found from the real path.
	real := filepath.Join(base, "real")
	os.MkdirAll(real, 0o755)
	alias := filepath.Join(base, "alias")
	os.Symlink(real, alias)
	pa := publish(t, alias)
	if d, _, err := Find(real, ""); err != nil || d.ID != pa.Descriptor.ID {
		t.Errorf("real path of a root opened through a symlink: %s %v", d.ID, err)
	}
}

func TestStale(t *testing.T) {
	dir := runtimeDir(t)
	root := t.TempDir()

	// A dead process: its entry is skipped and removed.
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	p := publish(t, root)
	d := p.Descriptor
	d.PID = dead.Process.Pid
	rewrite(t, dir, d)
	if sessions, _ := List(); len(sessions) != 0 {
		t.Fatalf("List with a dead pid: %+v", sessions)
	}
	if _, err := os.Lstat(filepath.Join(dir, d.ID+".json")); !os.IsNotExist(err) {
		t.Errorf("the stale descriptor was not removed: %v", err)
	}

	// A socket that refuses connections (its server crashed): Dial says so
	// at once, removes the entry, and Connect goes on to ErrNoSession.
	id := "00000000000000aa"
	sock := filepath.Join(dir, id+".sock")
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	l.SetUnlinkOnClose(false)
	l.Close()
	tok := filepath.Join(dir, "token-stale")
	os.WriteFile(tok, []byte(strings.Repeat("x", 32)), 0o600)
	rewrite(t, dir, Descriptor{ID: id, Roots: []string{root}, PID: os.Getpid(), Socket: sock, TokenFile: tok})
	sessions, _ := List()
	if len(sessions) != 1 || sessions[0].ID != id {
		t.Fatalf("List: %+v", sessions)
	}
	if _, err := Dial(context.Background(), sessions[0], "test"); !errors.Is(err, ErrStale) {
		t.Fatalf("Dial of a refused socket: %v", err)
	}
	for _, f := range []string{sock, tok, filepath.Join(dir, id+".json")} {
		if _, err := os.Lstat(f); !os.IsNotExist(err) {
			t.Errorf("%s left: %v", f, err)
		}
	}
	rewrite(t, dir, Descriptor{ID: id, Roots: []string{root}, PID: os.Getpid(), Socket: sock, TokenFile: tok})
	l, _ = net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
	l.SetUnlinkOnClose(false)
	l.Close()
	os.WriteFile(tok, []byte(strings.Repeat("x", 32)), 0o600)
	if _, _, err := Connect(context.Background(), root, "", "test"); !errors.Is(err, ErrNoSession) {
		t.Errorf("Connect past a stale session: %v", err)
	}
}

// rewrite writes d as the descriptor file of dir, mode 0600.
func rewrite(t *testing.T, dir string, d Descriptor) {
	t.Helper()
	data, _ := json.Marshal(d)
	if err := os.WriteFile(filepath.Join(dir, d.ID+".json"), data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// Descriptors that are not the user's private files, or that point outside
// the runtime directory, are ignored (and never followed).
func TestDescriptorRefused(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, dir string, d Descriptor)
	}{
		{"mode 644", func(t *testing.T, dir string, d Descriptor) {
			os.Chmod(filepath.Join(dir, d.ID+".json"), 0o644)
		}},
		{"symlink", func(t *testing.T, dir string, d Descriptor) {
			f := filepath.Join(dir, d.ID+".json")
			target := filepath.Join(outside, "d.json")
			data, _ := os.ReadFile(f)
			os.WriteFile(target, data, 0o600)
			os.Remove(f)
			os.Symlink(target, f)
		}},
		{"socket outside", func(t *testing.T, dir string, d Descriptor) {
			d.Socket = filepath.Join(outside, d.ID+".sock")
			rewrite(t, dir, d)
		}},
		{"socket of another id", func(t *testing.T, dir string, d Descriptor) {
			d.Socket = filepath.Join(dir, "0123456789abcdef.sock")
			rewrite(t, dir, d)
		}},
		{"token outside", func(t *testing.T, dir string, d Descriptor) {
			d.TokenFile = filepath.Join(outside, "token-x")
			rewrite(t, dir, d)
		}},
		{"token not a token file", func(t *testing.T, dir string, d Descriptor) {
			d.TokenFile = filepath.Join(dir, d.ID+".json")
			rewrite(t, dir, d)
		}},
		{"id not the name", func(t *testing.T, dir string, d Descriptor) {
			plantAs(t, dir, d.ID, Descriptor{ID: "0123456789abcdef", Roots: d.Roots, PID: d.PID, Socket: d.Socket, TokenFile: d.TokenFile})
		}},
		{"path in the id", func(t *testing.T, dir string, d Descriptor) {
			plantAs(t, dir, d.ID, Descriptor{ID: "../" + d.ID, Roots: d.Roots, PID: d.PID, Socket: d.Socket, TokenFile: d.TokenFile})
		}},
		{"too large", func(t *testing.T, dir string, d Descriptor) {
			d.Editor = strings.Repeat("x", maxDescriptor)
			rewrite(t, dir, d)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := runtimeDir(t)
			p := publish(t, root)
			tc.plant(t, dir, p.Descriptor)
			sessions, err := List()
			if err != nil || len(sessions) != 0 {
				t.Errorf("List: %+v %v, want nothing", sessions, err)
			}
			if _, _, err := Find(root, ""); !errors.Is(err, ErrNoSession) {
				t.Errorf("Find: %v, want ErrNoSession", err)
			}
			if _, err := Dial(context.Background(), p.Descriptor, "test"); err == nil {
				t.Error("Dial of a refused descriptor succeeded")
			}
		})
	}
}

// plantAs writes d as the descriptor file of id.
func plantAs(t *testing.T, dir, id string, d Descriptor) {
	data, _ := json.Marshal(d)
	if err := os.WriteFile(filepath.Join(dir, id+".json"), data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// The runtime directory must be the user's own private directory.
func TestRuntimeDirRefused(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, xdg string)
	}{
		{"symlink", func(t *testing.T, xdg string) {
			target := t.TempDir()
			os.Symlink(target, filepath.Join(xdg, "agentls"))
		}},
		{"group and others may enter", func(t *testing.T, xdg string) {
			os.Mkdir(filepath.Join(xdg, "agentls"), 0o755)
			os.Chmod(filepath.Join(xdg, "agentls"), 0o755)
		}},
		{"a file", func(t *testing.T, xdg string) {
			os.WriteFile(filepath.Join(xdg, "agentls"), nil, 0o600)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			xdg := t.TempDir()
			t.Setenv("XDG_RUNTIME_DIR", xdg)
			tc.setup(t, xdg)
			if _, err := Publish([]string{t.TempDir()}, "x"); err == nil {
				t.Error("Publish succeeded")
			}
			if _, err := List(); err == nil {
				t.Error("List succeeded")
			}
		})
	}
}

// A process of another uid that gets to the socket (as if its permissions
// were lost) is closed before it is answered; and a socket served by a
// process of another uid is refused by the client.
func TestPeerOfAnotherUID(t *testing.T) {
	dir := runtimeDir(t)
	p := publish(t, t.TempDir())
	testenv.AcceptEach(p, func(c net.Conn) { // answers whoever gets through, to show what Accept lets in
		c.Write([]byte("let in"))
		c.Close()
	})
	os.Chmod(filepath.Dir(dir), 0o755)
	os.Chmod(dir, 0o711)
	os.Chmod(p.Descriptor.Socket, 0o666)
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`
	cmd := testenv.Nobody(t, testenv.PeerDial(p.Descriptor.Socket, fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body)))
	out, err := cmd.CombinedOutput()
	// Closed before a byte is written: EOF, or a reset when the server
	// closed with the client's bytes unread.
	if err != nil || !strings.HasPrefix(string(out), "read 0: ") || strings.Contains(string(out), "let in") ||
		!strings.Contains(string(out), "EOF") && !strings.Contains(string(out), "connection reset") {
		t.Errorf("a peer of another uid: %v %s, want the connection closed unanswered", err, out)
	}
	os.Chmod(dir, 0o700)

	// The other way: a server of another uid.
	open := t.TempDir()
	os.Chmod(open, 0o777)
	sock := filepath.Join(open, "s.sock")
	srv := testenv.Nobody(t, testenv.PeerListen(sock))
	stdout, _ := srv.StdoutPipe()
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { srv.Process.Kill(); srv.Wait() }()
	buf := make([]byte, 6)
	if n, err := stdout.Read(buf); err != nil || string(buf[:n]) != "ready\n" {
		t.Fatalf("server of another uid: %q %v", buf[:n], err)
	}
	c, err := dialUser(context.Background(), sock)
	if err == nil {
		c.Close()
		t.Fatal("dialUser accepted a server of another uid")
	}
	if !strings.Contains(err.Error(), "uid 65534") {
		t.Errorf("dialUser: %v", err)
	}
}

// A session that takes the connection and never answers is an error after
// dialTimeout, not a hang.
func TestDialSilentSession(t *testing.T) {
	dir := runtimeDir(t)
	old := dialTimeout
	dialTimeout = 300 * time.Millisecond
	defer func() { dialTimeout = old }()
	id := "00000000000000bb"
	sock := filepath.Join(dir, id+".sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var held []net.Conn // open, never answered
	testenv.AcceptEach(l, func(c net.Conn) { held = append(held, c) })
	tok := filepath.Join(dir, "token-silent")
	os.WriteFile(tok, []byte(strings.Repeat("y", 32)), 0o600)
	d := Descriptor{ID: id, Roots: []string{t.TempDir()}, PID: os.Getpid(), Socket: sock, TokenFile: tok}
	rewrite(t, dir, d)
	_, err = Dial(context.Background(), d, "test")
	if err == nil || !strings.Contains(err.Error(), "did not answer") {
		t.Errorf("Dial of a silent session: %v", err)
	}
}

// TestCallParamsEncode: the arguments go into tool/call's params byte for
// byte when they are JSON; none are null; what is not JSON is an error.
func TestCallParamsEncode(t *testing.T) {
	p := callParams{Name: "read_file", Agent: "a<b"}
	for _, tc := range []struct {
		args    json.RawMessage
		want    string
		wantErr bool
	}{
		{json.RawMessage(`{ "path": "x<y.go",  "limit": 10 }`), `{"arguments":{ "path": "x<y.go",  "limit": 10 },"name":"read_file","agent":"a\u003cb"}`, false},
		{nil, `{"arguments":null,"name":"read_file","agent":"a\u003cb"}`, false},
		{json.RawMessage(`{"path":`), ``, true},
	} {
		got, err := p.encode(tc.args)
		if (err != nil) != tc.wantErr || string(got) != tc.want {
			t.Errorf("encode(%q) = %s, %v; want %s (error %v)", tc.args, got, err, tc.want, tc.wantErr)
		}
		if err == nil && !json.Valid(got) {
			t.Errorf("encode(%q) = %s: not JSON", tc.args, got)
		}
	}
}
