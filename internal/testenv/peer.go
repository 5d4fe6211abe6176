package testenv

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// The environment variables that make a test binary a peer process (see
// PeerMain).
const (
	peerListen = "AGENTLS_TEST_PEER_LISTEN" // a unix socket path to serve
	peerDial   = "AGENTLS_TEST_PEER_DIAL"   // a unix socket path to connect to
	peerSend   = "AGENTLS_TEST_PEER_SEND"   // what to write once connected
)

// PeerMain is a TestMain for the tests of socket permissions: it runs the
// tests, unless the binary was started as a peer by Nobody's command. A
// peer never returns:
//   - PeerListen(path): it listens on the unix socket path (mode 0777),
//     prints "ready", and holds every connection open unanswered until
//     killed;
//   - PeerDial(path, send): it connects to path, writes send, reads at most
//     100 bytes for up to 10 s and prints "read N: ERR" (or "dial: ERR"
//     when it could not connect).
func PeerMain(m *testing.M) {
	if path := os.Getenv(peerListen); path != "" {
		l, err := net.Listen("unix", path)
		if err != nil {
			fmt.Println("listen:", err)
			os.Exit(1)
		}
		os.Chmod(path, 0o777)
		fmt.Println("ready")
		var held []net.Conn
		for {
			c, err := l.Accept()
			if err != nil {
				os.Exit(0)
			}
			held = append(held, c)
		}
	}
	if path := os.Getenv(peerDial); path != "" {
		c, err := net.Dial("unix", path)
		if err != nil {
			fmt.Println("dial:", err)
			os.Exit(0)
		}
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		c.Write([]byte(os.Getenv(peerSend)))
		n, err := c.Read(make([]byte, 100))
		fmt.Printf("read %d: %v\n", n, err)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// PeerListen is the environment of a peer that serves the socket path.
func PeerListen(path string) []string { return []string{peerListen + "=" + path} }

// PeerDial is the environment of a peer that connects to path and writes
// send.
func PeerDial(path, send string) []string {
	return []string{peerDial + "=" + path, peerSend + "=" + send}
}

// Nobody returns a command that runs this test binary (copied where uid
// 65534 may run it) as uid and gid 65534, with env added to the
// environment: with PeerListen or PeerDial, under PeerMain, a process of
// another user. It skips the test unless it runs as root.
func Nobody(t testing.TB, env []string) *exec.Cmd {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("needs root to run a process of another uid")
	}
	base := t.TempDir()
	os.Chmod(base, 0o755)
	os.Chmod(filepath.Dir(base), 0o755)
	bin := filepath.Join(base, "peer")
	data, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	return cmd
}
