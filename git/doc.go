// Package git runs the git program for agentls: the repository handle and
// runner the git tools use (Open, Repo), and the environment that keeps
// git safe inside commands nobody approved (SafetyEnv).
//
// It promises:
//
//   - Only the workspace's own repository: the one git finds from the root
//     that holds a path (found once per root and then named explicitly:
//     --git-dir and --work-tree for a Repo, GIT_DIR and GIT_WORK_TREE in
//     SafetyEnv), so that a git directory planted in a subfolder is never
//     read; a command under a root without a repository gets a GIT_DIR
//     that cannot exist. No other repository is discovered:
//     safe.bareRepository=explicit (a folder shaped like a bare repository
//     is not one unless named) and GIT_CEILING_DIRECTORIES at the parents
//     of the roots.
//   - An argument vector, never a shell. A value that comes from the model
//     is either a path (given absolute, after "--", under
//     --literal-pathspecs) or a revision, remote or branch name, refused
//     when it starts with "-" (OptionLike, Repo.CheckRev,
//     Repo.CheckBranchName) and placed after --end-of-options where git
//     allows it. Output is capped; credentials in URLs are redacted from
//     what a failure reports (RedactURLs).
//   - Automatic git runs no program that configuration names. Git runs
//     "automatically" when no person approved the call that started it: a
//     Repo opened with Options.Safe (the read-only tools, approved or not,
//     since their question names no program; the assessment of every git
//     tool, such as a commit staged into a throwaway index to show its
//     diff), and commands that run because an allow list, an earlier
//     "always" or a mode let them (SafetyEnv). Every configuration key that
//     names a program (gitProgramKeys: hooks, fsmonitor, pagers, diff and
//     merge drivers, filters, credential helpers, ssh commands…) is then
//     overridden through GIT_CONFIG_COUNT/GIT_CONFIG_KEY_n/
//     GIT_CONFIG_VALUE_n, which git passes on to the git processes it
//     starts (submodules) and which hold for git run by an allow-listed
//     command. A call a person approved runs git as the person would, hooks
//     and filters included (Repo.ProgramsWarning names them for the
//     question), still in the workspace's own repository.
//
// Failures the model should see (git missing or failing, no repository, a
// refused value) are *Error, which carries the ToolResult error code the
// tools report; any other error means the machinery broke. A Repo belongs
// to one call and is not safe for concurrent use; SafetyEnv, RootOf and
// ConfigFiles are (the per-root caches are sync.Maps).
//
// It does not decide who approved what (the caller says, through
// Options.Safe and Repo.SetSafe), read tool arguments or resolve the
// workspace's path rules (the caller passes paths it resolved), and it
// does not sandbox the processes it starts.
package git
