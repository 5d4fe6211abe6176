package git

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentls/agentls/workspace"
)

// gitKey is one configuration key that names a program git runs, with the
// value that turns the program off.
type gitKey struct {
	// Pattern is the key, lower case; "*" stands for one subsection (a
	// driver, tool, remote or URL name), which may hold dots.
	Pattern string
	// Off is the value that disables the program.
	Off string
	// Always overrides the key whatever set it. The others are overridden
	// when the repository's configuration sets them (the local or worktree
	// file, or a file they include): the person's global and system
	// configuration (a git-lfs filter, a credential helper, a signing
	// program) stays in force.
	Always bool
	// Bang overrides the key only when its value starts with "!" (a shell
	// command rather than a git subcommand).
	Bang bool
}

// gitProgramKeys are the configuration keys whose value is (or selects) a
// program that git runs, from git-config(1), gitattributes(5),
// git-interpret-trailers(1), githooks(5) and git-lfs-config(5). Every
// automatic git process gets them overridden (gitSafeConfig); the test
// TestProgramKeysOverridden checks each one against a real git.
var gitProgramKeys = []gitKey{
	// Run by commands that only read: status, diff, log.
	{Pattern: "core.fsmonitor", Off: "false", Always: true},
	{Pattern: "core.hookspath", Off: os.DevNull, Always: true}, // hooks: <dir>/<name> cannot exist under a device
	{Pattern: "core.pager", Off: "cat", Always: true},
	{Pattern: "pager.*", Off: "false", Always: true},
	{Pattern: "core.editor", Off: ":", Always: true},
	{Pattern: "sequence.editor", Off: ":", Always: true},
	{Pattern: "core.askpass", Off: "", Always: true},
	{Pattern: "interactive.difffilter", Off: "", Always: true},
	{Pattern: "core.alternaterefscommand", Off: "", Always: true},
	{Pattern: "uploadpack.packobjectshook", Off: "", Always: true},
	{Pattern: "diff.external", Off: ""},
	{Pattern: "diff.*.command", Off: ""},
	{Pattern: "diff.*.textconv", Off: ""},
	{Pattern: "filter.*.clean", Off: ""},
	{Pattern: "filter.*.smudge", Off: ""},
	{Pattern: "filter.*.process", Off: ""},
	{Pattern: "filter.*.required", Off: "false"}, // a required filter that is off would fail every command
	{Pattern: "merge.*.driver", Off: ""},
	{Pattern: "alias.*", Off: "", Bang: true}, // "!cmd" runs a shell; an empty alias fails instead
	// Network and credentials.
	{Pattern: "core.sshcommand", Off: "ssh"},
	{Pattern: "core.gitproxy", Off: ""},
	{Pattern: "credential.helper", Off: ""}, // an empty helper clears the list
	{Pattern: "credential.*.helper", Off: ""},
	{Pattern: "remote.*.uploadpack", Off: "git-upload-pack"},
	{Pattern: "remote.*.receivepack", Off: "git-receive-pack"},
	{Pattern: "remote.*.vcs", Off: ""},
	{Pattern: "protocol.ext.allow", Off: "never", Always: true}, // ext:: URLs run a command
	{Pattern: "lfs.customtransfer.*.path", Off: ""},
	{Pattern: "lfs.extension.*.clean", Off: ""},
	{Pattern: "lfs.extension.*.smudge", Off: ""},
	// Signing and verification (log --show-signature, commit -S).
	{Pattern: "gpg.program", Off: "gpg"},
	{Pattern: "gpg.*.program", Off: ""},
	{Pattern: "gpg.ssh.defaultkeycommand", Off: ""},
	// Commands that a person usually types, reachable from an allow list.
	{Pattern: "trailer.*.cmd", Off: ""},
	{Pattern: "trailer.*.command", Off: ""},
	{Pattern: "submodule.*.update", Off: "checkout"}, // "!cmd" runs a shell
	{Pattern: "difftool.*.cmd", Off: ""},
	{Pattern: "difftool.*.path", Off: ""},
	{Pattern: "mergetool.*.cmd", Off: ""},
	{Pattern: "mergetool.*.path", Off: ""},
	{Pattern: "guitool.*.cmd", Off: ""},
	{Pattern: "browser.*.cmd", Off: ""},
	{Pattern: "browser.*.path", Off: ""},
	{Pattern: "man.*.cmd", Off: ""},
	{Pattern: "man.*.path", Off: ""},
	{Pattern: "imap.tunnel", Off: ""},
	{Pattern: "sendemail.sendmailcmd", Off: ""},
	{Pattern: "sendemail.smtpserver", Off: ""},
	{Pattern: "sendemail.tocmd", Off: ""},
	{Pattern: "sendemail.cccmd", Off: ""},
	{Pattern: "sendemail.*.sendmailcmd", Off: ""},
	{Pattern: "sendemail.*.smtpserver", Off: ""},
	{Pattern: "sendemail.*.tocmd", Off: ""},
	{Pattern: "sendemail.*.cccmd", Off: ""},
	{Pattern: "init.templatedir", Off: ""}, // templates carry hooks
}

// gitFixedConfig is set in every automatic git process besides the
// program keys: no discovery of bare repositories, no quoting of paths.
var gitFixedConfig = [][2]string{
	{"safe.bareRepository", "explicit"},
}

// matchGitKey reports whether key (as git prints it: section and name lower
// case, subsection as written) matches pattern.
func matchGitKey(pattern, key string) bool {
	lk := strings.ToLower(key)
	pre, post, ok := strings.Cut(pattern, "*")
	if !ok {
		return lk == pattern
	}
	// The subsection sits between the first and the last dot of the key.
	return len(lk) > len(pre)+len(post) && strings.HasPrefix(lk, pre) && strings.HasSuffix(lk, post)
}

// gitRepoLoc is a workspace root's repository.
type gitRepoLoc struct {
	gitDir string // absolute
	top    string // the work tree's top level
}

// gitRepos caches each root's repository: found once, kept while its git
// directory is there. A root git found in no work tree is kept as such
// (an empty gitRepoLoc) while neither it nor a folder above it holds a
// .git (noGitAbove): git finds a work tree only through one (bare
// repositories are not discovered), so git is asked again once one
// appears (the person may run git init).
var gitRepos sync.Map // root → gitRepoLoc

// workspaceRepo returns the repository of root, found by git from root
// itself (a root may lie inside its repository) with bare repositories not
// discovered, or ok false when root is not in a work tree.
func workspaceRepo(root string) (gitRepoLoc, bool, error) {
	if v, ok := gitRepos.Load(root); ok {
		loc := v.(gitRepoLoc)
		if loc.gitDir == "" {
			if noGitAbove(root) {
				return gitRepoLoc{}, false, nil
			}
			gitRepos.Delete(root)
			return workspaceRepo(root)
		}
		// By path, not beneath the root: the git directory may lie outside
		// every root (a root inside its repository, a linked work tree),
		// and the answer only says whether to ask git again, which reads
		// the repository by path itself; nothing of it reaches a result.
		if fi, err := os.Stat(filepath.Join(loc.gitDir, "HEAD")); err == nil && fi.Mode().IsRegular() {
			return loc, true, nil
		}
		gitRepos.Delete(root)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	args := gitConfigArgs(gitFixedOverrides())
	args = append(args, "rev-parse", "--absolute-git-dir", "--show-toplevel")
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = root
	// The server's own GIT_CEILING_DIRECTORIES still limits the search.
	cmd.Env = append(gitBaseEnv(os.Environ()), "GIT_CEILING_DIRECTORIES="+os.Getenv("GIT_CEILING_DIRECTORIES"))
	none := noGitAbove(root) // before git looks: a .git made meanwhile is seen next time
	out, err := cmd.Output()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		if none {
			gitRepos.Store(root, gitRepoLoc{})
		}
		return gitRepoLoc{}, false, nil // not a work tree (or git refuses it)
	case err != nil:
		return gitRepoLoc{}, false, err
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) != 2 || lines[0] == "" || lines[1] == "" {
		return gitRepoLoc{}, false, nil
	}
	loc := gitRepoLoc{gitDir: lines[0], top: lines[1]}
	gitRepos.Store(root, loc)
	return loc, true, nil
}

// noGitAbove reports whether neither dir nor any folder above it holds a
// .git (folder, file or anything else; a .git that cannot be checked counts
// as one, and so does a relative dir).
func noGitAbove(dir string) bool {
	if !filepath.IsAbs(dir) {
		return false
	}
	for {
		if _, err := os.Lstat(filepath.Join(dir, ".git")); !errors.Is(err, fs.ErrNotExist) {
			return false
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return true
		}
		dir = parent
	}
}

// ConfigFiles returns the files the configuration of root's
// repository is read from that lie outside its git directory: files its own
// configuration includes (include.path, includeIf.*.path), whether they
// exist yet or not. A write to one is a write of git configuration.
func ConfigFiles(root string) []string {
	loc, ok, err := workspaceRepo(root)
	if err != nil || !ok {
		return nil
	}
	watched := []string{filepath.Join(loc.gitDir, "config"), filepath.Join(loc.gitDir, "config.worktree")}
	if v, ok := gitIncludes.Load(loc.gitDir); ok {
		e := v.(gitIncludesEntry)
		if e.sig == statSignature(append(watched, e.files...)) {
			return e.files
		}
	}
	files := readGitConfigFiles(loc)
	gitIncludes.Store(loc.gitDir, gitIncludesEntry{files: files, sig: statSignature(append(watched, files...))})
	return files
}

// gitIncludes caches ConfigFiles per git directory, while none of the
// files it read (or found missing) changed.
var gitIncludes sync.Map // git dir → gitIncludesEntry

type gitIncludesEntry struct {
	files []string
	sig   string
}

// statSignature sums up the size and modification time of each file (or
// its absence). It stats by path, not beneath a root: the files are git's
// configuration, which may lie anywhere (an include names any file), git
// reads them by path itself, and the signature only keys a cache; it never
// reaches a result.
func statSignature(paths []string) string {
	var b strings.Builder
	for _, p := range paths {
		b.WriteString(p)
		if fi, err := os.Stat(p); err == nil {
			fmt.Fprintf(&b, "\x00%d\x00%d\x00%v\n", fi.Size(), fi.ModTime().UnixNano(), fi.Mode())
		} else {
			b.WriteString("\x00-\n")
		}
	}
	return b.String()
}

// readGitConfigFiles is ConfigFiles without the cache.
func readGitConfigFiles(loc gitRepoLoc) []string {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	args := append([]string{"--git-dir=" + loc.gitDir, "--work-tree=" + loc.top}, gitConfigArgs(gitFixedOverrides())...)
	args = append(args, "config", "--list", "--show-origin", "--show-scope", "-z")
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = loc.top
	cmd.Env = gitBaseEnv(os.Environ())
	out, err := cmd.Output()
	if err != nil {
		return nil
	}
	abs := func(p, base string) string {
		if strings.HasPrefix(p, "~/") {
			if home, err := os.UserHomeDir(); err == nil {
				p = filepath.Join(home, p[2:])
			}
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(base, p)
		}
		return filepath.Clean(p)
	}
	var files []string
	fields := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	for i := 0; i+2 < len(fields); i += 3 {
		scope, origin := fields[i], strings.TrimPrefix(fields[i+1], "file:")
		key, value, _ := strings.Cut(fields[i+2], "\n")
		if !repoScoped(scope) || origin == fields[i+1] {
			continue
		}
		origin = abs(origin, loc.top)
		if !Within(loc.gitDir, origin) {
			files = append(files, origin)
		}
		lk := strings.ToLower(key)
		if lk == "include.path" || strings.HasPrefix(lk, "includeif.") && strings.HasSuffix(lk, ".path") {
			files = append(files, abs(value, filepath.Dir(origin)))
		}
	}
	return files
}

// RootOf returns the root of ws that holds dir (the deepest one), or the
// first root.
func RootOf(ws *workspace.Workspace, dir string) string {
	best := ""
	for _, r := range ws.Roots() {
		if Within(r, dir) && len(r) > len(best) {
			best = r
		}
	}
	if best == "" {
		best = ws.Root()
	}
	return best
}

// gitLocatingEnv are variables that would point git at another repository,
// index, object store or configuration, or make it look further for one.
// Automatic git processes never inherit them.
var gitLocatingEnv = map[string]bool{
	"GIT_DIR": true, "GIT_WORK_TREE": true, "GIT_INDEX_FILE": true, "GIT_OBJECT_DIRECTORY": true,
	"GIT_ALTERNATE_OBJECT_DIRECTORIES": true, "GIT_COMMON_DIR": true, "GIT_NAMESPACE": true,
	"GIT_CEILING_DIRECTORIES": true, "GIT_DISCOVERY_ACROSS_FILESYSTEM": true, "GIT_CONFIG": true,
	"GIT_CONFIG_PARAMETERS": true, "GIT_CONFIG_COUNT": true, "GIT_IMPLICIT_WORK_TREE": true,
	"GIT_PREFIX": true, "GIT_SHALLOW_FILE": true, "GIT_GRAFT_FILE": true, "GIT_REPLACE_REF_BASE": true,
}

// gitBaseEnv returns env without gitLocatingEnv and GIT_CONFIG_KEY_n /
// GIT_CONFIG_VALUE_n.
func gitBaseEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if gitLocatingEnv[name] || strings.HasPrefix(name, "GIT_CONFIG_KEY_") || strings.HasPrefix(name, "GIT_CONFIG_VALUE_") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// gitFixedOverrides are the overrides that do not depend on a repository:
// gitFixedConfig and the Always program keys.
func gitFixedOverrides() [][2]string {
	out := append([][2]string(nil), gitFixedConfig...)
	for _, k := range gitProgramKeys {
		if k.Always && !strings.Contains(k.Pattern, "*") {
			out = append(out, [2]string{k.Pattern, k.Off})
		}
	}
	return out
}

// gitConfigArgs turns overrides into -c options.
func gitConfigArgs(kvs [][2]string) []string {
	var args []string
	for _, kv := range kvs {
		args = append(args, "-c", kv[0]+"="+kv[1])
	}
	return args
}

// gitConfigEnv turns overrides into GIT_CONFIG_COUNT and its pairs.
func gitConfigEnv(kvs [][2]string) []string {
	env := []string{"GIT_CONFIG_COUNT=" + strconv.Itoa(len(kvs))}
	for i, kv := range kvs {
		env = append(env, "GIT_CONFIG_KEY_"+strconv.Itoa(i)+"="+kv[0], "GIT_CONFIG_VALUE_"+strconv.Itoa(i)+"="+kv[1])
	}
	return env
}

// gitConfigEntry is one entry of `git config --list --show-scope`.
type gitConfigEntry struct {
	scope, key, value string
	hasValue          bool
}

// gitConfigList lists every configuration entry git sees in the repository
// at loc (includes followed; an included file has the scope of the file
// that includes it). It runs with the fixed overrides and runs no program.
func gitConfigList(ctx context.Context, loc gitRepoLoc, env []string) ([]gitConfigEntry, error) {
	args := append([]string{"--git-dir=" + loc.gitDir, "--work-tree=" + loc.top}, gitConfigArgs(gitFixedOverrides())...)
	args = append(args, "config", "--list", "--show-scope", "-z")
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = loc.top
	cmd.Env = gitBaseEnv(env)
	out, err := cmd.Output()
	if err != nil {
		return nil, err
	}
	var list []gitConfigEntry
	fields := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	for i := 0; i+1 < len(fields); i += 2 {
		e := gitConfigEntry{scope: fields[i]}
		e.key, e.value, e.hasValue = strings.Cut(fields[i+1], "\n")
		list = append(list, e)
	}
	return list, nil
}

// repoScoped reports whether a scope is the repository's own configuration
// (what a cloned or unpacked repository, or a write into it, controls).
func repoScoped(scope string) bool { return scope == "local" || scope == "worktree" }

// gitSafeConfig returns the overrides of an automatic git process in the
// repository at loc: the fixed ones, and the value that turns off each
// program key that the repository's configuration sets. repoPrograms lists
// those keys with their values (for a warning).
func gitSafeConfig(ctx context.Context, loc gitRepoLoc, env []string) (overrides [][2]string, repoPrograms []string, err error) {
	overrides = gitFixedOverrides()
	list, err := gitConfigList(ctx, loc, env)
	if err != nil {
		return nil, nil, err
	}
	seen := map[string]bool{}
	for _, e := range list {
		for _, k := range gitProgramKeys {
			if !matchGitKey(k.Pattern, e.key) || (k.Bang && !strings.HasPrefix(strings.TrimSpace(e.value), "!")) {
				continue
			}
			wild := strings.Contains(k.Pattern, "*")
			if repoScoped(e.scope) && e.value != k.Off && e.value != "false" && e.value != "" &&
				k.Pattern != "filter.*.required" && k.Pattern != "protocol.ext.allow" {
				repoPrograms = append(repoPrograms, e.key+"="+e.value)
			}
			fixed := k.Always && !wild // already in gitFixedOverrides
			if !fixed && (repoScoped(e.scope) || k.Always) && !seen[e.key] {
				seen[e.key] = true
				overrides = append(overrides, [2]string{e.key, k.Off})
			}
			break
		}
	}
	return overrides, repoPrograms, nil
}

// gitCeilings is GIT_CEILING_DIRECTORIES for the roots: git looks for a
// repository no higher than a root (or the top of the repository found),
// nor past the inherited ceilings.
func gitCeilings(inherited string, roots []string, tops ...string) string {
	seen := map[string]bool{}
	var out []string
	for _, d := range filepath.SplitList(inherited) {
		if d != "" && !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	for _, d := range append(roots, tops...) {
		if d == "" {
			continue
		}
		p := filepath.Dir(d)
		if p != d && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return strings.Join(out, string(filepath.ListSeparator))
}

// SafetyEnv returns env, the environment of a command that runs without
// a person's approval (an allow-listed shell_exec or shell_background) in
// the folder dir, changed so that any git the command runs is automatic git
// (see the package comment): GIT_DIR and GIT_WORK_TREE name the repository of the root
// that holds dir; without one GIT_DIR names a path that cannot exist, so
// that git finds no repository at all; GIT_CEILING_DIRECTORIES stops the
// search at the roots; GIT_CONFIG_COUNT and its pairs override every
// program key (gitProgramKeys) and set safe.bareRepository=explicit.
// Overrides the server's own environment held (GIT_CONFIG_KEY_n) come
// first, so that ours win.
func SafetyEnv(ws *workspace.Workspace, dir string, env []string) []string {
	roots := ws.Roots()
	root := RootOf(ws, dir)
	inherited := gitInheritedConfig(env)
	ceiling := gitEnvValue(env, "GIT_CEILING_DIRECTORIES")
	out := gitBaseEnv(env)
	overrides := gitFixedOverrides()
	top := ""
	// Without a repository of its own (or one whose configuration cannot
	// be read), git gets none: a git directory found below the root is
	// another repository.
	gitDir := filepath.Join(os.DevNull, "agentls-no-workspace-repository")
	if root != "" {
		if loc, ok, err := workspaceRepo(root); err == nil && ok {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			o, _, err := gitSafeConfig(ctx, loc, env)
			cancel()
			if err == nil {
				overrides, gitDir, top = o, loc.gitDir, loc.top
				out = append(out, "GIT_WORK_TREE="+loc.top)
			}
		}
	}
	out = append(out, "GIT_DIR="+gitDir)
	out = append(out, "GIT_CEILING_DIRECTORIES="+gitCeilings(ceiling, roots, top), "GIT_TERMINAL_PROMPT=0")
	return append(out, gitConfigEnv(append(inherited, overrides...))...)
}

// gitEnvValue returns the last value of name in env.
func gitEnvValue(env []string, name string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == name {
			v = val
		}
	}
	return v
}

// gitInheritedConfig returns the overrides the environment env holds
// through GIT_CONFIG_COUNT (the person's own), in order.
func gitInheritedConfig(env []string) [][2]string {
	vars := map[string]string{}
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, "GIT_CONFIG_") {
			vars[k] = v
		}
	}
	n, err := strconv.Atoi(vars["GIT_CONFIG_COUNT"])
	if err != nil || n <= 0 || n > 1000 {
		return nil
	}
	var out [][2]string
	for i := 0; i < n; i++ {
		k, ok := vars["GIT_CONFIG_KEY_"+strconv.Itoa(i)]
		if !ok || k == "" {
			return nil // git refuses the whole set; so do we
		}
		out = append(out, [2]string{k, vars["GIT_CONFIG_VALUE_"+strconv.Itoa(i)]})
	}
	return out
}

// Within reports whether p is dir or below it (by path, lexically).
func Within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
