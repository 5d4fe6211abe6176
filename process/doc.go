// Package process supervises the processes the tools start (shell_exec,
// shell_background, run_code, custom tools, git): it starts a program, keeps
// its output, and ends it with everything it started.
//
// It holds the Store (a session's processes by id, with Start, Get and
// Close), Proc (one started process: its exit, its output logs, Terminate),
// Cgroup (a pids and optionally memory cgroup for one process tree),
// Capture (the head and tail of a stream for a result) and EndAll (every
// process of every Store, when the server stops).
//
// What it promises:
//   - Every process starts as the leader of its own process group; where
//     bwrap works it runs in its own pid namespace (sandbox.Lifetime, or the
//     Spec's sandbox), and where the machine allows, in its own pids cgroup.
//     Signals go to the whole group, namespace and cgroup, so children that
//     call setsid or double-fork end too.
//   - Nothing outlives its call or its session: when the leader exits, what
//     is left of its tree gets SIGTERM and, after a short grace, SIGKILL;
//     Proc.Terminate does the same at once; Store.Close ends every process
//     of a Store and deletes its output; EndAll ends every process when the
//     server is told to stop; and a server killed outright takes its
//     children with it (sandbox.Start's parent-death signal, the pid
//     namespace), while the cgroups a dead server left are swept by the next
//     one.
//   - Output is capped: each stream keeps at most MaxStoredBytes in an
//     unlinked temporary file (what comes beyond is counted, not kept); a
//     Store keeps the last finished foreground processes and at most
//     MaxBackground running background ones.
//   - Store, Proc and EndAll are safe for concurrent use; a Capture is used
//     from one goroutine.
//
// What it does not do: decide whether a command may run (package approval),
// build a sandbox's arguments (package sandbox), or turn its errors into a
// tool's result (package tools).
package process
