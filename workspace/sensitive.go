package workspace

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"

	"github.com/bmatcuk/doublestar/v4"
)

// Sensitive files by identity, not by spelling. The sensitive globs
// (paths.sensitive) name files; a file has other names the globs do not
// see: a hard link (another name, same device and inode), a spelling in
// another case on a file system that ignores case (macOS, an ext4 casefold
// folder), a bind mount. So:
//
//   - On a root whose file system ignores case (caseFold, detected per
//     root), the globs match case-insensitively.
//   - The identity (device, inode) of every file and folder below the
//     roots that the globs cover is collected by one walk (sensitiveSet),
//     and every confined read checks the identity of what it opened
//     (Open, ReadLimited, ReadDisk, the walk's File.Read) or resolved
//     (Resolve, IsSensitive) against it: refused with SENSITIVE_PATH.
//   - The set is dropped when the roots or the configuration change, and
//     when a file whose name the globs cover changes (events.go); a regular
//     file with several links whose links or content changed about when the
//     set was collected or since (its ctime) makes the set be collected
//     again before the answer, so a hard link made after the walk is caught
//     even when nobody announced the file it names.
//
// The walk for the set costs as much as walking the whole tree, which a
// search that skips most files (`agentls call grep` with a server's copy of
// the index) would pay again; it is done only when a check needs it (see
// soleTree): a walk from the root of a workspace whose one root has no mount
// point below it asks about a regular file with one link by its own name
// (walkCheck), and the root folder itself is no other entry's identity.
//
// Symlinks need no identity: Resolve and the confined operations follow
// them to the real path and check that path's name, and the identity of
// the file opened is checked as well. Paths outside the allowed roots
// (/proc/self/root/..., /proc/self/fd/N, /dev/fd/N) are refused before
// anything is opened.

// fileID is a file's identity: what every name of the file shares.
type fileID struct{ dev, ino uint64 }

// fileStat is what the identity check needs of a stat, and the stat's
// stamp (File.ReadStamped).
type fileStat struct {
	id      fileID
	nlink   uint64
	ctime   time.Time
	regular bool
	dir     bool
	stamp   Stamp
}

// sensitiveSet is what one walk of the roots found.
type sensitiveSet struct {
	ids   map[fileID]bool
	start time.Time // when the walk began
}

// maxSensitiveWalk bounds the entries the walk that collects the set
// visits; beyond it (a root such as a home folder) files are known by
// their names only.
const maxSensitiveWalk = 500_000

// linkSlack is how long before a walk a link's change still makes the set
// be collected again (ctime has the kernel's coarse clock ticks, a few
// milliseconds).
const linkSlack = 50 * time.Millisecond

// sensitiveState is the Workspace's share of this file.
type sensitiveState struct {
	set   atomic.Pointer[sensitiveSet]
	gen   atomic.Uint64 // bumped by every drop
	build sync.Mutex    // one walk at a time

	foldMu sync.Mutex
	fold   map[string]bool // root -> its file system ignores case
}

// dropSensitive forgets the collected identities (and, with all, the
// roots' case detection): the next check walks again.
func (w *Workspace) dropSensitive(all bool) {
	w.sens.gen.Add(1)
	w.sens.set.Store(nil)
	if all {
		w.sens.foldMu.Lock()
		w.sens.fold = nil
		w.sens.foldMu.Unlock()
	}
}

// sensitiveEvent drops what ch makes stale: everything on a reset, the
// identities when a file the globs could cover changed (in any case).
func (w *Workspace) sensitiveEvent(ch Event) {
	if ch.Reset {
		w.dropSensitive(true)
		return
	}
	if ch.Path == "" {
		return
	}
	for _, r := range w.Roots() {
		if rel, ok := Within(r, ch.Path); ok {
			if w.matchSensitive(filepath.ToSlash(rel), true) {
				w.dropSensitive(false)
			}
			return
		}
	}
}

// sensitiveSet returns the identities of the files the globs cover,
// walking the roots when they are not known.
func (w *Workspace) sensitiveSet() *sensitiveSet {
	if s := w.sens.set.Load(); s != nil {
		return s
	}
	w.sens.build.Lock()
	defer w.sens.build.Unlock()
	if s := w.sens.set.Load(); s != nil {
		return s
	}
	gen := w.sens.gen.Load()
	s := w.collectSensitive()
	if w.sens.gen.Load() == gen {
		w.sens.set.Store(s)
	}
	return s
}

// collectSensitive walks every root (hidden and ignored entries too, not
// .git, no symlink followed) and records the identity of each file and
// folder the globs cover.
func (w *Workspace) collectSensitive() *sensitiveSet {
	s := &sensitiveSet{ids: map[fileID]bool{}, start: time.Now()}
	if len(w.Config().Paths.Sensitive) == 0 {
		return s
	}
	var mu sync.Mutex
	var seen atomic.Int64
	errFull := errors.New("full")
	globs := w.Config().Paths.Sensitive
	for _, root := range w.Roots() {
		m := newGlobMatcher(globs, w.caseFold(root))
		opts := WalkOptions{IncludeIgnored: true, IncludeHidden: true, Dirs: true}
		_, err := Walk(context.Background(), root, opts, func(f *File) error {
			if seen.Add(1) > maxSensitiveWalk {
				return errFull
			}
			if f.Type&^fs.ModeDir != 0 || !m.match(f.Rel) {
				return nil
			}
			fi, err := f.Info()
			if err != nil {
				return nil
			}
			if st, ok := statOf(fi); ok {
				mu.Lock()
				s.ids[st.id] = true
				mu.Unlock()
			}
			return nil
		})
		if errors.Is(err, errFull) {
			break
		}
	}
	return s
}

// sensitiveByStat reports whether st is the stat of a file the globs cover
// under another name.
func (w *Workspace) sensitiveByStat(st fileStat) bool {
	if len(w.Config().Paths.Sensitive) == 0 {
		return false
	}
	if st.dir && w.sens.set.Load() == nil {
		if _, _, root := w.soleTree(&st.id); root {
			return false // the root of a sole tree: no entry of the set
		}
	}
	s := w.sensitiveSet()
	if s.ids[st.id] {
		return true
	}
	if st.regular && st.nlink > 1 && !st.ctime.Before(s.start.Add(-linkSlack)) {
		return w.renewSensitive(s).ids[st.id]
	}
	return false
}

// renewSensitive collects the identities again unless another caller did
// since old was current (so a burst of new links costs one walk).
func (w *Workspace) renewSensitive(old *sensitiveSet) *sensitiveSet {
	w.sens.build.Lock()
	cur := w.sens.set.Load()
	if cur != nil && cur != old {
		w.sens.build.Unlock()
		return cur
	}
	w.sens.gen.Add(1)
	w.sens.set.Store(nil)
	w.sens.build.Unlock()
	return w.sensitiveSet()
}

// errSensitiveID is the refusal of a file that is a sensitive file under
// another name.
func errSensitiveID(p string) error {
	return &PathError{Code: "SENSITIVE_PATH", Path: p, Reason: "the file is one that matches a sensitive pattern (paths.sensitive) " +
		"under another name (a hard link, another spelling or a mount of it); agents may not touch it"}
}

// checkStat refuses the file of st (a stat of p) when it is a sensitive
// file under another name.
func (w *Workspace) checkStat(p string, st fileStat, ok bool) error {
	if ok && w.sensitiveByStat(st) {
		return errSensitiveID(p)
	}
	return nil
}

// checkPathID refuses the existing file at the absolute path p (lstat: the
// name itself) when it is a sensitive file under another name.
func (w *Workspace) checkPathID(arg, p string) error {
	st, ok := lstatID(p)
	return w.checkStat(arg, st, ok)
}

// idCheck is a read's check of the file it opened, before it reads.
type idCheck func(p string, st fileStat) error

// readCheck returns the check of the files w's confined reads open; nil
// for no workspace.
func (w *Workspace) readCheck() idCheck {
	if w == nil {
		return nil
	}
	return func(p string, st fileStat) error { return w.checkStat(p, st, true) }
}

// soleTree reports whether every entry below the workspace's root has one
// path below the roots, and returns the root and its identity: there is
// one root, and no mount point lies below it (a bind mount shows a folder,
// with its identities, a second time). Then a folder has one path (it has
// one parent), and so does a regular file with one link: the set, collected
// from the root without following symlinks, holds such an entry exactly
// when that path matches the globs, and never holds the root. ok is false
// when it cannot tell (no mount table). want, when not nil, is the only
// identity of the root the caller cares about: another root answers false
// without the mount table being read.
func (w *Workspace) soleTree(want *fileID) (root string, id fileID, ok bool) {
	roots := w.Roots()
	if len(roots) != 1 {
		return "", fileID{}, false
	}
	root = roots[0]
	st, ok := statID(root)
	if !ok || want != nil && st.id != *want {
		return "", fileID{}, false
	}
	real, err := filepath.EvalSymlinks(root)
	if err != nil || mountsBelow(real) {
		return "", fileID{}, false
	}
	return root, st.id, true
}

// walkCheck returns the identity check of the files a walk from root
// (opened, with identity rootID) opens or stats relative to their open
// folder (File.Read, File.Stamp; the folders opened one below the other
// without following a symlink, so the path names the file): readCheck,
// except that in a walk from the root of a sole tree that follows no
// symlink, a regular file with one link is refused by its own path's name,
// with the globs and case rule the set is collected with, and no set is
// needed (soleTree says why the answers are the same).
func (w *Workspace) walkCheck(root string, rootID fileID, follow bool) idCheck {
	full := w.readCheck()
	if full == nil || follow {
		return full
	}
	globs := w.Config().Paths.Sensitive
	if len(globs) == 0 {
		return full
	}
	wsRoot, _, ok := w.soleTree(&rootID)
	if !ok {
		return full
	}
	m := newGlobMatcher(globs, w.caseFold(wsRoot))
	prefix := root + string(filepath.Separator)
	return func(p string, st fileStat) error {
		rel, below := strings.CutPrefix(p, prefix)
		if !below || !st.regular || st.nlink != 1 {
			return full(p, st)
		}
		if m.match(filepath.ToSlash(rel)) {
			return errSensitiveID(p)
		}
		return nil
	}
}

// caseFold reports whether root's file system ignores case, detected once
// per root (until a reset): an entry of root, or root in its parent, is
// looked up in the other case; the same file means case is ignored.
func (w *Workspace) caseFold(root string) bool {
	w.sens.foldMu.Lock()
	v, ok := w.sens.fold[root]
	w.sens.foldMu.Unlock()
	if ok {
		return v
	}
	v = detectCaseFold(root)
	w.sens.foldMu.Lock()
	if w.sens.fold == nil {
		w.sens.fold = map[string]bool{}
	}
	w.sens.fold[root] = v
	w.sens.foldMu.Unlock()
	return v
}

// setCaseFold overrides the detection for root (tests of the matcher on a
// file system that cannot ignore case).
func (w *Workspace) setCaseFold(root string, fold bool) {
	w.sens.foldMu.Lock()
	defer w.sens.foldMu.Unlock()
	if w.sens.fold == nil {
		w.sens.fold = map[string]bool{}
	}
	w.sens.fold[root] = fold
	w.sens.set.Store(nil)
	w.sens.gen.Add(1)
}

// detectCaseFold looks up a name with a letter in root (the first few
// entries), else root's own name in its parent, in the other case.
func detectCaseFold(root string) bool {
	if d, err := os.Open(root); err == nil {
		names, _ := d.Readdirnames(64)
		d.Close()
		for _, n := range names {
			if same, ok := sameInOtherCase(root, n); ok {
				return same
			}
		}
	}
	if parent := filepath.Dir(root); parent != root {
		if same, ok := sameInOtherCase(parent, filepath.Base(root)); ok {
			return same
		}
	}
	return false
}

// sameInOtherCase looks up name in dir in the other case: ok is false when
// name has no letter with another case or it cannot be looked up.
func sameInOtherCase(dir, name string) (same, ok bool) {
	other := swapCase(name)
	if other == name {
		return false, false
	}
	fi, err := os.Lstat(filepath.Join(dir, name))
	if err != nil {
		return false, false
	}
	fo, err := os.Lstat(filepath.Join(dir, other))
	if errors.Is(err, fs.ErrNotExist) {
		return false, true
	}
	if err != nil {
		return false, false
	}
	return os.SameFile(fi, fo), true
}

func swapCase(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsUpper(r) {
			return unicode.ToLower(r)
		}
		return unicode.ToUpper(r)
	}, s)
}

// globMatcher is matchSensitive with the globs compiled once, for a walk
// that asks about every entry (collectSensitive): its answers are
// matchSensitive's (TestGlobMatcher). A glob without a slash matches any
// segment of the path, "**/NAME" the last one and "**/NAME/**" any one,
// where NAME is literal or has one '*' at an end: those are plain string
// comparisons; any other glob goes to doublestar as in matchSensitive.
type globMatcher struct {
	fold     bool
	segments []NameGlob // any segment
	lasts    []NameGlob // the last segment
	slashed  []pathGlob // whole paths (doublestar)
}

// pathGlob is a glob on a whole path, with the literal segments any path
// it matches has (doublestar matches segment by segment).
type pathGlob struct {
	glob     string
	literals []string
}

// mayMatch reports whether rel has every literal segment of the glob, or
// (for rel+"/x", the path matchSensitive also tries) is one short of "x".
func (g pathGlob) mayMatch(rel string) bool {
	for _, l := range g.literals {
		if l != "x" && rel != l && !strings.HasPrefix(rel, l+"/") && !strings.HasSuffix(rel, "/"+l) && !strings.Contains(rel, "/"+l+"/") {
			return false
		}
	}
	return true
}

// NameGlob is a glob on one path segment (a file or folder name), with
// plain string compares for a literal and for one '*' at either end.
type NameGlob struct {
	glob  string
	lit   string
	kind  byte // '=' literal, '<' prefix, '>' suffix, '*' path.Match
	match func(glob, name string) (bool, error)
}

// NewNameGlob returns the glob g on a name, as path.Match reads it.
func NewNameGlob(g string) NameGlob { return newNameGlob(g, pathMeta, path.Match) }

// Match reports whether name matches the glob (false for a malformed one).
func (g NameGlob) Match(name string) bool {
	switch g.kind {
	case '=':
		return name == g.lit
	case '<':
		return strings.HasPrefix(name, g.lit)
	case '>':
		return strings.HasSuffix(name, g.lit)
	}
	ok, _ := g.match(g.glob, name)
	return ok
}

// newNameGlob classifies g, a glob on one segment whose meta characters
// are meta (path.Match's, or doublestar's, which adds braces).
func newNameGlob(g, meta string, match func(string, string) (bool, error)) NameGlob {
	n := NameGlob{glob: g, kind: '*', match: match}
	switch {
	case !strings.ContainsAny(g, meta):
		n.kind, n.lit = '=', g
	case len(g) > 1 && strings.HasSuffix(g, "*") && !strings.ContainsAny(g[:len(g)-1], meta):
		n.kind, n.lit = '<', g[:len(g)-1]
	case len(g) > 1 && strings.HasPrefix(g, "*") && !strings.ContainsAny(g[1:], meta):
		n.kind, n.lit = '>', g[1:]
	}
	return n
}

const (
	pathMeta       = `*?[\`
	doublestarMeta = `*?[]{}\`
)

func newGlobMatcher(globs []string, fold bool) *globMatcher {
	m := &globMatcher{fold: fold}
	for _, pat := range globs {
		if fold {
			pat = strings.ToLower(pat)
		}
		if !strings.Contains(pat, "/") {
			m.segments = append(m.segments, newNameGlob(pat, pathMeta, path.Match))
			continue
		}
		pat = strings.TrimPrefix(pat, "/")
		if rest, ok := strings.CutPrefix(pat, "**/"); ok {
			if name, ok := strings.CutSuffix(rest, "/**"); ok && name != "" && !strings.ContainsAny(name, "/"+doublestarMeta) {
				m.segments = append(m.segments, NameGlob{kind: '=', lit: name})
				continue
			}
			if n := newNameGlob(rest, doublestarMeta, doublestar.Match); rest != "" && n.kind != '*' && !strings.Contains(rest, "/") {
				m.lasts = append(m.lasts, n)
				continue
			}
		}
		g := pathGlob{glob: pat}
		for _, seg := range strings.Split(pat, "/") {
			if seg != "" && !strings.ContainsAny(seg, doublestarMeta) {
				g.literals = append(g.literals, seg)
			}
		}
		m.slashed = append(m.slashed, g)
	}
	return m
}

// match is matchSensitive(rel, fold) for the globs and fold m was made
// with.
func (m *globMatcher) match(rel string) bool {
	if m.fold {
		rel = strings.ToLower(rel)
	}
	last := rel[strings.LastIndexByte(rel, '/')+1:]
	for _, g := range m.lasts {
		if g.Match(last) {
			return true
		}
	}
	if len(m.segments) > 0 {
		for rest := rel; ; {
			seg, after, more := strings.Cut(rest, "/")
			for _, g := range m.segments {
				if g.Match(seg) {
					return true
				}
			}
			if !more {
				break
			}
			rest = after
		}
	}
	for _, g := range m.slashed {
		if !g.mayMatch(rel) {
			continue
		}
		pat := g.glob
		if ok, _ := doublestar.Match(pat, rel); ok {
			return true
		}
		if ok, _ := doublestar.Match(pat, rel+"/x"); ok && strings.HasSuffix(pat, "/**") {
			return true
		}
	}
	return false
}

// stampInfo is Stamp through Info.
func (f *File) stampInfo() (Stamp, bool, error) {
	fi, err := f.Info()
	if err != nil {
		return Stamp{}, false, nil
	}
	if f.w != nil && f.w.ws != nil {
		// The full check (not the walk's): without the open folder, the
		// stat may have been reached through a symlink the path does not
		// name.
		st, ok := statOf(fi)
		if err := f.w.ws.checkStat(f.Path, st, ok); err != nil {
			return Stamp{}, false, err
		}
	}
	st, ok := StampOf(fi)
	return st, ok, nil
}
