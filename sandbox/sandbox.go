// Package sandbox holds the confinement of the processes that tools start:
// the bubblewrap command line of a Spec (Args), the environment of an
// isolated process (Env), finding bwrap and the system programs a sandbox
// shows (Find, SystemProgram), and Start, which forks with a parent-death
// signal. Supervising the processes (process groups, output, ending them)
// is package process's; it starts them through this one.
//
// Args builds bubblewrap (bwrap, Debian package bubblewrap) command lines
// in two modes:
//
//   - Isolate: the sandbox of run_code and of commands that run without a
//     person (allow-listed shell commands). New user (where bwrap makes
//     one), mount, pid, network, IPC and UTS namespaces; the system folders
//     read-only (/usr and its compatibility links, a short list of /etc
//     files without secrets); the given folders (the workspace roots)
//     read-write at their own paths; a fresh /proc, /dev and a private
//     tmpfs /tmp; nothing else of the host: no /home or /root, no /run, no
//     host /tmp, no sockets (the network namespace also hides the host's
//     abstract Unix sockets). Network only when Spec.Network is set.
//     Every capability is dropped, and /proc/sys is read-only (sysctl
//     files check only the uid, and a server run as root runs the sandbox
//     as uid 0).
//   - Lifetime: the whole file system as the server sees it, the host
//     network and the same ids (as far as bwrap allows: without setuid
//     bwrap a non-root user gets a user namespace that maps only their own
//     id), but a pid namespace, so that the whole process tree dies with
//     the namespace's first process.
//
// Both modes use --die-with-parent and --new-session: when the server dies
// (also by SIGKILL) bwrap gets SIGKILL, its pid namespace ends and every
// process in it is killed by the kernel, however it tried to detach
// (setsid, double fork, its own process group).
//
// Start starts a command from one OS thread that never exits, so that a
// parent-death signal (SysProcAttr.Pdeathsig, and bwrap's
// --die-with-parent) fires when the server process dies and never because
// the Go runtime retired the thread that forked.
package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// Package is the Debian (and most distributions') package that provides
// bwrap.
const Package = "bubblewrap"

// ErrNotInstalled is returned by Find when no bwrap is on PATH.
var ErrNotInstalled = errors.New("bwrap is not installed (apt-get install " + Package + ")")

// Mode is what a sandbox confines.
type Mode int

const (
	// Lifetime keeps the server's view of the system and only puts the
	// process tree in its own pid namespace.
	Lifetime Mode = iota
	// Isolate confines the tree to the writable folders, read-only system
	// folders and (unless Network) no network.
	Isolate
)

// Spec is one sandbox.
type Spec struct {
	Mode Mode
	// Writable are folders bound read-write at their own paths (Isolate).
	Writable []string
	// ReadOnly are extra folders or files bound read-only at their own
	// paths (Isolate), for instance the folder of run_code's program.
	ReadOnly []string
	// Network shares the host's network (Isolate; Lifetime always does).
	Network bool
	// Dir is the working folder inside the sandbox.
	Dir string
}

var probes sync.Map // bwrap path -> *probe

type probe struct {
	once sync.Once
	err  error
}

// Find returns the bwrap program on PATH once bwrap has been seen to start
// both modes on this machine (probed once per path). The error says why
// not: ErrNotInstalled, or what bwrap answered.
func Find() (string, error) {
	path, err := exec.LookPath("bwrap")
	if err != nil {
		return "", ErrNotInstalled
	}
	v, _ := probes.LoadOrStore(path, &probe{})
	p := v.(*probe)
	p.once.Do(func() {
		for _, m := range []Mode{Lifetime, Isolate} {
			args := append(Args(path, Spec{Mode: m, Dir: "/"}, -1), "true")
			out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
			if err != nil {
				p.err = fmt.Errorf("bwrap (package %s) does not work here: %v: %s", Package, err, strings.TrimSpace(string(out)))
				return
			}
		}
	})
	if p.err != nil {
		return "", p.err
	}
	return path, nil
}

// systemLinks are the top-level folders of the system that are bound
// read-only (or recreated as the symbolic links they are, on merged /usr
// systems).
var systemLinks = []string{"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}

// etcFiles are the files and folders of /etc a program needs to run, to
// know user and group names, time zones, locales and TLS roots. None holds
// a secret (/etc/shadow, /etc/ssh and the like are not among them).
var etcFiles = []string{
	"passwd", "group", "nsswitch.conf", "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "timezone",
	"alternatives", "ssl", "ca-certificates", "ca-certificates.conf", "mime.types", "os-release",
	"debian_version", "locale.alias", "locale.conf", "bash.bashrc", "profile", "inputrc", "magic", "papersize",
	"hosts", "protocols", "services", // localhost and port names on the sandbox's own loopback
}

// netEtcFiles are needed only with the network: name resolution.
var netEtcFiles = []string{"resolv.conf", "host.conf", "gai.conf"}

// Args returns the bwrap command line for s, up to and including the "--"
// after which the program and its arguments follow. infoFD, when not
// negative, is the descriptor on which bwrap writes its JSON information
// (child-pid: the host pid of the namespace's first process;
// pid-namespace: its inode).
func Args(bwrap string, s Spec, infoFD int) []string {
	a := []string{bwrap, "--die-with-parent", "--new-session"}
	if infoFD >= 0 {
		a = append(a, "--info-fd", strconv.Itoa(infoFD))
	}
	if s.Mode == Lifetime {
		a = append(a, "--unshare-pid", "--dev-bind", "/", "/", "--proc", "/proc")
		if os.Geteuid() == 0 {
			// bwrap keeps root's capabilities: root stays root.
			a = append(a, "--cap-add", "ALL")
		}
		if s.Dir != "" {
			a = append(a, "--chdir", s.Dir)
		}
		return append(a, "--")
	}
	a = append(a, "--unshare-all")
	if s.Network {
		a = append(a, "--share-net")
	}
	a = append(a, "--cap-drop", "ALL", "--ro-bind", "/usr", "/usr")
	for _, d := range systemLinks {
		fi, err := os.Lstat(d)
		switch {
		case err != nil:
		case fi.Mode()&os.ModeSymlink != 0:
			if t, err := os.Readlink(d); err == nil {
				a = append(a, "--symlink", t, d)
			}
		case fi.IsDir():
			a = append(a, "--ro-bind", d, d)
		}
	}
	etc := etcFiles
	if s.Network {
		etc = append(append([]string(nil), etc...), netEtcFiles...)
	}
	if py, _ := filepath.Glob("/etc/python3*"); len(py) > 0 {
		for _, p := range py {
			etc = append(etc, filepath.Base(p))
		}
	}
	for _, e := range etc {
		a = append(a, "--ro-bind-try", "/etc/"+e, "/etc/"+e)
	}
	// Root in the sandbox (a server run as root gets no user namespace)
	// has no capability left, but sysctl files check only the uid: they
	// are read-only, or a write to kernel.core_pattern would run a program
	// of the workspace as root outside.
	a = append(a, "--proc", "/proc", "--ro-bind", "/proc/sys", "/proc/sys",
		"--ro-bind-try", "/proc/sysrq-trigger", "/proc/sysrq-trigger",
		"--dev", "/dev", "--tmpfs", "/tmp", "--dir", "/var/tmp")
	for _, d := range s.ReadOnly {
		a = append(a, "--ro-bind", d, d)
	}
	for _, d := range s.Writable {
		a = append(a, "--bind", d, d)
	}
	if s.Dir != "" {
		a = append(a, "--chdir", s.Dir)
	}
	return append(a, "--remount-ro", "/", "--")
}

// hostOnly are variables that point at the host's sockets, agents and
// per-user folders, which an isolated sandbox does not have.
var hostOnly = map[string]bool{
	"XDG_RUNTIME_DIR": true, "DBUS_SESSION_BUS_ADDRESS": true, "SSH_AUTH_SOCK": true, "SSH_AGENT_PID": true,
	"GPG_AGENT_INFO": true, "DISPLAY": true, "WAYLAND_DISPLAY": true, "XAUTHORITY": true, "XDG_CONFIG_HOME": true,
	"XDG_CACHE_HOME": true, "XDG_DATA_HOME": true, "XDG_STATE_HOME": true, "KRB5CCNAME": true,
}

// Env returns the environment of an isolated sandbox: env without the
// variables that point at host sockets and per-user folders, and with HOME
// and TMPDIR set to the sandbox's private /tmp.
func Env(env []string) []string {
	out := make([]string, 0, len(env)+2)
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if hostOnly[name] || name == "HOME" || name == "TMPDIR" {
			continue
		}
		out = append(out, kv)
	}
	return append(out, "HOME=/tmp", "TMPDIR=/tmp")
}

// SystemProgram finds a program in the system folders that an isolated
// sandbox shows (/usr/local/bin, /usr/bin, /bin), not through the PATH,
// whose other folders (a home's version managers) the sandbox hides.
func SystemProgram(names ...string) (string, error) {
	for _, n := range names {
		for _, d := range []string{"/usr/local/bin", "/usr/bin", "/bin"} {
			p := filepath.Join(d, n)
			fi, err := os.Stat(p)
			if err != nil || !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
				continue
			}
			// A link into a folder the sandbox hides would not run there.
			if real, err := filepath.EvalSymlinks(p); err == nil && systemPath(real) {
				return p, nil
			}
		}
	}
	return "", fmt.Errorf("no %s in /usr/local/bin, /usr/bin or /bin", strings.Join(names, " or "))
}

// systemPath reports whether an absolute, resolved path lies in a folder
// that an isolated sandbox shows read-only.
func systemPath(p string) bool {
	for _, d := range append([]string{"/usr"}, systemLinks...) {
		if p == d || strings.HasPrefix(p, d+"/") {
			return true
		}
	}
	return false
}
