package sandbox

import (
	"slices"
	"strings"
	"testing"
)

func TestArgs(t *testing.T) {
	t.Parallel()
	iso := Args("/usr/bin/bwrap", Spec{Mode: Isolate, Writable: []string{"/w"}, ReadOnly: []string{"/code"}, Dir: "/w/sub"}, 3)
	net := Args("/usr/bin/bwrap", Spec{Mode: Isolate, Writable: []string{"/w"}, Network: true}, -1)
	life := Args("/usr/bin/bwrap", Spec{Mode: Lifetime, Dir: "/w"}, 3)
	has := func(a []string, seq ...string) bool {
		for i := 0; i+len(seq) <= len(a); i++ {
			if slices.Equal(a[i:i+len(seq)], seq) {
				return true
			}
		}
		return false
	}
	for _, tt := range []struct {
		name string
		args []string
		seq  []string
		want bool
	}{
		{"isolate unshares everything", iso, []string{"--unshare-all"}, true},
		{"isolate has no network", iso, []string{"--share-net"}, false},
		{"isolate dies with the server", iso, []string{"--die-with-parent"}, true},
		{"isolate has its own session", iso, []string{"--new-session"}, true},
		{"isolate drops capabilities", iso, []string{"--cap-drop", "ALL"}, true},
		{"isolate binds the workspace", iso, []string{"--bind", "/w", "/w"}, true},
		{"isolate binds the code read-only", iso, []string{"--ro-bind", "/code", "/code"}, true},
		{"isolate has a private /tmp", iso, []string{"--tmpfs", "/tmp"}, true},
		{"isolate has read-only sysctls", iso, []string{"--ro-bind", "/proc/sys", "/proc/sys"}, true},
		{"isolate reports on fd 3", iso, []string{"--info-fd", "3"}, true},
		{"isolate works in the folder", iso, []string{"--chdir", "/w/sub"}, true},
		{"isolate shows no shadow", iso, []string{"--ro-bind-try", "/etc/shadow", "/etc/shadow"}, false},
		{"isolate shows no home", iso, []string{"--bind", "/home", "/home"}, false},
		{"isolate without network has no resolv.conf", iso, []string{"--ro-bind-try", "/etc/resolv.conf", "/etc/resolv.conf"}, false},
		{"network shares the network", net, []string{"--share-net"}, true},
		{"network resolves names", net, []string{"--ro-bind-try", "/etc/resolv.conf", "/etc/resolv.conf"}, true},
		{"lifetime keeps the file system", life, []string{"--dev-bind", "/", "/"}, true},
		{"lifetime has its own pids", life, []string{"--unshare-pid"}, true},
		{"lifetime keeps the network", life, []string{"--unshare-all"}, false},
		{"lifetime dies with the server", life, []string{"--die-with-parent"}, true},
	} {
		if got := has(tt.args, tt.seq...); got != tt.want {
			t.Errorf("%s: %v in %v is %v", tt.name, tt.seq, tt.args, got)
		}
	}
	for _, a := range [][]string{iso, net, life} {
		if a[len(a)-1] != "--" {
			t.Errorf("does not end with --: %v", a)
		}
	}
	env := Env([]string{"HOME=/root", "PATH=/usr/bin", "SSH_AUTH_SOCK=/run/user/0/ssh", "XDG_RUNTIME_DIR=/run/user/0", "TMPDIR=/x"})
	if want := []string{"PATH=/usr/bin", "HOME=/tmp", "TMPDIR=/tmp"}; !slices.Equal(env, want) {
		t.Errorf("Env = %v, want %v", env, want)
	}
}

// TestFindWithoutBwrap: a PATH without bwrap gives ErrNotInstalled, which
// names the package.
func TestFindWithoutBwrap(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	if _, err := Find(); err != ErrNotInstalled || !strings.Contains(err.Error(), "apt-get install bubblewrap") {
		t.Errorf("Find = %v", err)
	}
}
