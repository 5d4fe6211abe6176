//go:build unix

package tools

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentls/agentls/workspace"
)

// atomicContents are the two versions the child writes in turn: large, so
// that a kill often lands in the middle of a write.
func atomicContents() [2][]byte {
	line := strings.Repeat("0123456789abcdef", 4) + "\n"
	a := bytes.Repeat([]byte("old "+line), 100_000) // 7 MB
	b := bytes.Repeat([]byte("new "+line), 120_000) // 8 MB
	return [2][]byte{a, b}
}

const atomicChildEnv = "AGENTLS_ATOMIC_KILL_CHILD"

// TestAtomicWriteSurvivesKill re-runs the test binary as a child that
// writes two large versions of a file in turn through
// workspace.WriteFileAtomic, and SIGKILLs it at random moments: the file
// is always one whole version, never a truncated or mixed one.
func TestAtomicWriteSurvivesKill(t *testing.T) {
	t.Parallel()
	contents := atomicContents()
	if target := os.Getenv(atomicChildEnv); target != "" {
		os.Stdout.WriteString("writing\n")
		for i := 1; ; i++ {
			if err := workspace.WriteFileAtomic(target, contents[i%2], 0o644); err != nil {
				os.Exit(3)
			}
		}
	}
	if testing.Short() {
		t.Skip("kills child processes")
	}
	dir := t.TempDir()
	target := filepath.Join(dir, "big.txt")
	if err := os.WriteFile(target, contents[0], 0o640); err != nil {
		t.Fatal(err)
	}
	sums := map[[32]byte]int{sha256.Sum256(contents[0]): 0, sha256.Sum256(contents[1]): 1}
	seen := [2]int{}
	const rounds = 25
	for round := 0; round < rounds; round++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestAtomicWriteSurvivesKill$", "-test.count=1")
		// The child's TestMain makes a home folder in TMPDIR that the kill
		// leaves behind: a TMPDIR of this test's keeps it from piling up.
		cmd.Env = append(os.Environ(), atomicChildEnv+"="+target, "TMPDIR="+t.TempDir())
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Wait until the child writes, then kill it at a random moment of
		// its loop (a write and sync of 8 MB takes tens of milliseconds).
		if _, err := bufio.NewReader(out).ReadString('\n'); err != nil {
			t.Fatalf("round %d: child: %v", round, err)
		}
		time.Sleep(time.Duration(rand.IntN(300)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		err = cmd.Wait()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
			t.Fatalf("round %d: the child was not killed: %v", round, err)
		}
		data, err := os.ReadFile(target)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		v, ok := sums[sha256.Sum256(data)]
		if !ok {
			t.Fatalf("round %d: the file is neither version after a kill: %d bytes", round, len(data))
		}
		seen[v]++
		if fi, _ := os.Stat(target); fi.Mode().Perm() != 0o640 {
			t.Errorf("round %d: mode %v, want 0640 kept", round, fi.Mode().Perm())
		}
	}
	// Temporary files a kill leaves behind are in the same directory and
	// hidden; the target itself is always whole.
	leftovers, _ := filepath.Glob(filepath.Join(dir, ".big.txt.agentls-*"))
	t.Logf("%d kills: old version %d times, new %d times; %d temporary files left by kills", rounds, seen[0], seen[1], len(leftovers))
	if seen[1] == 0 {
		t.Log("the child never completed a write before it was killed; the kills all hit the first write")
	}
}
