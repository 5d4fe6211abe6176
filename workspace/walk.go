package workspace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// WalkOptions configure a walk. The zero value walks every file that is not
// hidden, not ignored and not in .git, at any depth, without size cap.
type WalkOptions struct {
	// IncludeIgnored reports entries the ignore files exclude.
	IncludeIgnored bool
	// IncludeHidden reports entries whose name starts with '.'.
	IncludeHidden bool
	// IncludeGit enters and reports .git directories too (for checks that
	// must see everything below a directory, such as the sensitive globs
	// before a recursive delete).
	IncludeGit bool
	// Dirs reports directories too (fn sees them before their contents are
	// walked; returning fs.SkipDir skips their contents).
	Dirs bool
	// MaxDepth limits the depth (1: the root's entries); 0 means no limit.
	MaxDepth int
	// MaxFileBytes skips files larger than this (0: no cap).
	MaxFileBytes int64
	// ReadContent says fn reads the files with File.Read or File.ReadText,
	// which then check the size cap themselves.
	ReadContent bool
	// FollowSymlinks follows symlinks whose target is inside Roots.
	FollowSymlinks bool
	// Roots are the trees symlinks may lead into (default: the walk's root).
	Roots []string
	// Workers is the number of goroutines; 0 means GOMAXPROCS.
	Workers int
	// Prune, when set, is asked about every directory before it is entered
	// (rel as in File.Rel); false skips it. It runs on the walk's goroutines.
	Prune func(rel string) bool
	// Filter, when set, is asked about every entry (rel as in File.Rel)
	// before the hidden and ignore rules, and can skip it (a directory is then
	// not entered) or keep it in spite of them. It runs on the walk's
	// goroutines.
	Filter func(rel string, isDir bool) Verdict
}

// Verdict is a Filter's answer: 0 lets the walk's rules decide.
type Verdict uint8

// The verdicts, which combine.
const (
	// Skip leaves the entry out.
	Skip Verdict = 1 << iota
	// KeepIgnored keeps the entry even if the ignore rules exclude it.
	KeepIgnored
	// KeepHidden keeps the entry even if it is hidden.
	KeepHidden
)

// File is one entry of a walk.
type File struct {
	// Path is the absolute path (through the symlinks followed, if any).
	Path string
	// Rel is the path relative to the walk's root, with forward slashes;
	// when the root is a file, its base name.
	Rel string
	// Name is the base name.
	Name string
	// Depth is 1 for the root's entries.
	Depth int
	// Type holds the type bits: 0 for a regular file, fs.ModeDir,
	// fs.ModeSymlink (a link not followed), or another fs.ModeType bit.
	Type fs.FileMode
	// Worker is the index (0 ≤ Worker < the number of workers) of the
	// goroutine fn runs on: callers keep per-worker buffers with it.
	Worker int

	w    *walk
	dir  *dirHandle // the open parent directory, for openat
	link *target    // where a followed symlink leads
}

// dirHandle is an open directory whose entries are being reported and
// whose subdirectories are still to be opened. Files and subdirectories are
// opened relative to it (openat, with O_NOFOLLOW), so that a directory
// swapped for a symlink during the walk cannot lead it outside its tree.
// It stays open while references remain: the readDir reporting its entries
// holds one, and so does each queued subdirectory until it is opened.
type dirHandle struct {
	mu     sync.RWMutex
	fd     int // -1: none
	refs   int
	closed bool
}

func newDirHandle(fd int) *dirHandle { return &dirHandle{fd: fd, refs: 1} }

func (d *dirHandle) acquire() {
	d.mu.Lock()
	d.refs++
	d.mu.Unlock()
}

func (d *dirHandle) release() {
	if d == nil {
		return
	}
	d.mu.Lock()
	d.refs--
	if d.refs <= 0 && !d.closed {
		if d.fd >= 0 {
			closeFd(d.fd)
		}
		d.closed = true
	}
	d.mu.Unlock()
}

// dirEntry is one entry of a directory listing.
type dirEntry struct {
	name string
	typ  fs.FileMode
}

// IsDir reports whether the entry is a directory (or a followed link to one).
func (f *File) IsDir() bool { return f.Type&fs.ModeDir != 0 }

// IsRegular reports whether the entry is a regular file (or a followed link
// to one).
func (f *File) IsRegular() bool { return f.Type&fs.ModeType == 0 }

// Info returns the entry's file info: the entry itself (a symlink not
// followed is described as a link), or for a followed link its target. It
// is looked up relative to the open parent directory while there is one;
// later through the walk's workspace (see Workspace.Walk), or by path.
func (f *File) Info() (fs.FileInfo, error) {
	if f.link != nil {
		return lstatBeneath(f.link.root, f.link.rel, f.Path)
	}
	if fi, ok, err := atDir(f, func(fd int) (fs.FileInfo, error) { return lstatAt(fd, f.Name, f.Path) }); ok {
		return fi, err
	}
	if f.w != nil && f.w.ws != nil {
		return f.w.ws.Lstat(f.Path)
	}
	return os.Lstat(f.Path)
}

// Readlink returns the target of a symlink entry, looked up like Info.
func (f *File) Readlink() (string, error) {
	if s, ok, err := atDir(f, func(fd int) (string, error) { return readlinkIn(fd, f.Name) }); ok {
		return s, err
	}
	if f.w != nil && f.w.ws != nil {
		return f.w.ws.Readlink(f.Path)
	}
	return os.Readlink(f.Path)
}

// atDir runs op on the open parent directory's descriptor; ok is false
// when it is not open any more.
func atDir[T any](f *File, op func(fd int) (T, error)) (T, bool, error) {
	var zero T
	if f.dir == nil || f.link != nil {
		return zero, false, nil
	}
	f.dir.mu.RLock()
	defer f.dir.mu.RUnlock()
	if f.dir.closed || f.dir.fd < 0 {
		return zero, false, nil
	}
	v, err := op(f.dir.fd)
	return v, true, err
}

// ErrTooLarge is returned by File.Read for a file over the size cap.
var ErrTooLarge = errors.New("file is larger than the size cap")

// ErrBinary is returned by File.ReadText for a binary file.
var ErrBinary = errors.New("binary file")

// BinarySniffLen is how much of a file IsBinary looks at.
const BinarySniffLen = 8 << 10

// IsBinary reports whether data looks binary: a NUL byte in its first 8 KiB.
func IsBinary(data []byte) bool {
	if len(data) > BinarySniffLen {
		data = data[:BinarySniffLen]
	}
	return bytes.IndexByte(data, 0) >= 0
}

// Read reads the whole file into buf (grown as needed) with raw system
// calls and returns the bytes read. A file over the walk's MaxFileBytes
// gives ErrTooLarge and is counted in Stats.TooLarge. Called from fn, it
// opens the file relative to its open parent directory (openat with
// O_NOFOLLOW: a file swapped for a symlink is not read); later, through
// the walk's workspace (see Workspace.Walk), or by its path. It reads
// regular files only. In a walk of a workspace, a file that is a sensitive
// one under another name (a hard link; sensitive.go) is refused with a
// *PathError. It is safe for concurrent use.
func (f *File) Read(buf []byte) ([]byte, error) {
	return f.read(buf, nil)
}

// ReadStamped is Read that also gives the stamp of the file it read, in a
// walk of a workspace: its stat as the identity check took it, on the
// open file before any byte was read (no stat of its own). ok is false
// when there was no such stat (not a walk of a workspace, or the read
// failed).
func (f *File) ReadStamped(buf []byte) (data []byte, st Stamp, ok bool, err error) {
	data, err = f.read(buf, func(fs fileStat) { st, ok = fs.stamp, fs.regular })
	return data, st, ok && err == nil, err
}

// read is Read; seen, when set, is told of the stat the identity check
// takes of the file opened.
func (f *File) read(buf []byte, seen func(fileStat)) ([]byte, error) {
	var max int64
	if f.w != nil {
		max = f.w.opts.MaxFileBytes
	}
	var check, full idCheck // opened in its open folder; by a path
	if f.w != nil {
		check, full = f.w.check, f.w.ws.readCheck()
	}
	if check != nil && seen != nil {
		inner := check
		check = func(p string, st fileStat) error {
			seen(st)
			return inner(p, st)
		}
	}
	data, done, err := atDir(f, func(fd int) ([]byte, error) { return readFileAt(fd, f.Name, f.Path, buf, max, check) })
	switch {
	case done:
	case f.link != nil:
		data, err = readBeneath(*f.link, f.Path, buf, max, full)
	case f.w != nil && f.w.ws != nil:
		data, err = f.w.ws.ReadLimited(f.Path, buf, max)
	default:
		data, err = readFileRaw(f.Path, buf, max, nil)
	}
	if errors.Is(err, ErrTooLarge) && f.w != nil {
		f.w.stats.TooLarge.Add(1)
	}
	return data, err
}

// bufferSize is the capacity of a new buffer for a file of size bytes,
// replacing the caller's of capacity had (0: none), under a cap of limit
// bytes (0: none). A buffer the caller reuses from file to file grows by
// doubling, not to each larger file's size in turn (fewer allocations of
// fresh memory); without one, the data is sized for the file (the caller
// may keep it).
func bufferSize(size, had, limit int64) int64 {
	if had == 0 {
		return size + 512
	}
	n := max(size+512, 2*had, 32<<10)
	if limit > 0 {
		n = min(n, max(size+512, limit+1))
	}
	return n
}

// ReadText is Read that also refuses binary files with ErrBinary, counted in
// Stats.Binary.
func (f *File) ReadText(buf []byte) ([]byte, error) {
	data, err := f.Read(buf)
	if err != nil {
		return data, err
	}
	if IsBinary(data) {
		if f.w != nil {
			f.w.stats.Binary.Add(1)
		}
		return data, ErrBinary
	}
	return data, nil
}

// WalkStats counts what a walk saw and skipped. Its fields are updated
// atomically while the walk runs.
type WalkStats struct {
	Files    atomic.Int64 // files reported
	Dirs     atomic.Int64 // directories entered
	Ignored  atomic.Int64 // entries the ignore rules excluded
	Hidden   atomic.Int64 // hidden entries skipped
	TooLarge atomic.Int64 // files over MaxFileBytes
	Binary   atomic.Int64 // files ReadText refused
	Errors   atomic.Int64 // directories or files that could not be read
}

// Walk walks root (a directory or a file) under opts and calls fn for every
// entry, concurrently. It is the one file walk every tool shares
// (list_directory, grep, glob, the index), and its rules are:
//
//   - The .git directory is never entered or reported.
//   - Hidden entries (a name starting with '.') are skipped unless
//     IncludeHidden.
//   - Unless IncludeIgnored, entries the ignore rules exclude are skipped,
//     and an excluded directory is not entered (git never re-includes
//     anything below it). The rules are ripgrep's defaults: inside a git
//     repository the .gitignore files of the walked directories and of their
//     parents up to the repository's top, .git/info/exclude and the user's
//     core.excludesFile; everywhere
//     the .ignore and .rgignore files (they win over .gitignore in the same
//     directory). See ignore.go for the matching itself.
//   - Symlinks are reported with Type fs.ModeSymlink and never followed,
//     unless FollowSymlinks: then a link whose target resolves inside one of
//     Roots is reported as its target's type; a link that leads out of the
//     roots is still reported as a symlink and not followed. A directory
//     reached through links is walked through links at most once, so loops
//     end.
//   - Files larger than MaxFileBytes are skipped and counted in
//     Stats.TooLarge. With ReadContent the check is left to File.Read, which
//     does it on the open file with no extra system call.
//   - Binary files (a NUL byte in the first 8 KiB) are reported; File.ReadText
//     refuses them and counts them in Stats.Binary.
//   - The walk runs on Workers goroutines (default GOMAXPROCS) and calls fn
//     from all of them, in no particular order. Collect returns the entries
//     sorted with ComparePaths; callers that stream sort what they keep.
//   - MaxDepth limits the depth: 1 reports the root's own entries only.
//   - Filter can skip entries, or keep them in spite of the hidden and
//     ignore rules (ripgrep's --glob and --type do that).
//   - Walking a file reports that file alone, hidden or ignored.
//
// fn returning fs.SkipDir for a directory skips its contents; any other
// error stops the walk and is returned. Unreadable directories are counted
// in Stats.Errors, not returned. Walk returns when every call of fn has
// returned, with ctx's error when it was cancelled.
//
// Below the root, every directory is opened relative to its parent's
// descriptor without following a symlink (on Linux; elsewhere by path), so
// a directory swapped for a symlink while the walk runs is not entered.
func Walk(ctx context.Context, root string, opts WalkOptions, fn func(*File) error) (*WalkStats, error) {
	return walkFrom(ctx, nil, root, opts, fn)
}

// Walk is the package's Walk with root itself opened beneath the
// workspace's allowed roots like Open (a root reached through a symlink
// that leads outside, or swapped for one, is refused with a *PathError),
// and files read after fn returns read through the workspace too.
func (ws *Workspace) Walk(ctx context.Context, root string, opts WalkOptions, fn func(*File) error) (*WalkStats, error) {
	return walkFrom(ctx, ws, root, opts, fn)
}

func walkFrom(ctx context.Context, ws *Workspace, root string, opts WalkOptions, fn func(*File) error) (*WalkStats, error) {
	root, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("walk %s: %w", root, err)
	}
	root = filepath.Clean(root)
	w := &walk{ctx: ctx, opts: opts, fn: fn, stats: &WalkStats{}, ws: ws}
	var fi fs.FileInfo
	var rootDir *os.File
	if ws != nil {
		w.check = ws.readCheck()
		if rootDir, err = ws.Open(root); err == nil {
			fi, err = rootDir.Stat()
			if st, ok := fstatID(rootDir); ok {
				w.check = ws.walkCheck(root, st.id, opts.FollowSymlinks)
			}
		}
	} else {
		fi, err = os.Stat(root)
	}
	if err != nil {
		if rootDir != nil {
			rootDir.Close()
		}
		var pe *PathError
		if errors.As(err, &pe) {
			return w.stats, err
		}
		return w.stats, fmt.Errorf("walk: %w", err)
	}
	if !fi.IsDir() {
		if rootDir != nil {
			rootDir.Close()
		}
		if opts.MaxFileBytes > 0 && !opts.ReadContent && fi.Size() > opts.MaxFileBytes {
			w.stats.TooLarge.Add(1)
			return w.stats, nil
		}
		w.stats.Files.Add(1)
		err := fn(&File{Path: root, Rel: filepath.Base(root), Name: filepath.Base(root), Depth: 1, Type: fi.Mode().Type(), w: w})
		if errors.Is(err, fs.SkipDir) {
			err = nil
		}
		return w.stats, err
	}
	if opts.FollowSymlinks {
		roots := opts.Roots
		if len(roots) == 0 {
			roots = []string{root}
		}
		for _, r := range roots {
			if real, err := filepath.EvalSymlinks(r); err == nil {
				w.realRoots = append(w.realRoots, real)
			}
		}
		if real, err := filepath.EvalSymlinks(root); err == nil {
			w.visited = map[string]bool{real: true}
		}
	}
	start := w.topStack(root)
	first := dirJob{abs: root, ign: start.stack, gitRel: start.rel, git: start.git}
	if rootDir != nil {
		first.open = rootDir
	}
	w.run(first)
	if w.err != nil {
		return w.stats, w.err
	}
	return w.stats, ctx.Err()
}

// Collect walks like Walk and returns the entries sorted with ComparePaths.
// keep, when set, chooses the entries to return (it runs concurrently).
func Collect(ctx context.Context, root string, opts WalkOptions, keep func(*File) bool) ([]*File, *WalkStats, error) {
	var mu sync.Mutex
	var out []*File
	stats, err := Walk(ctx, root, opts, func(f *File) error {
		if keep != nil && !keep(f) {
			return nil
		}
		mu.Lock()
		out = append(out, f)
		mu.Unlock()
		return nil
	})
	sortFiles(out)
	return out, stats, err
}

func sortFiles(fs []*File) {
	sort.Slice(fs, func(i, j int) bool { return ComparePaths(fs[i].Rel, fs[j].Rel) < 0 })
}

// ComparePaths orders slash-separated paths as a tree: component by
// component, so that a directory's entries come right after it ("a/b"
// before "a.go").
func ComparePaths(a, b string) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		ca, cb := a[i], b[i]
		if ca == cb {
			continue
		}
		if ca == '/' {
			return -1
		}
		if cb == '/' {
			return 1
		}
		if ca < cb {
			return -1
		}
		return 1
	}
	switch {
	case len(a) < len(b):
		return -1
	case len(a) > len(b):
		return 1
	}
	return 0
}

type dirJob struct {
	parent *dirHandle // holds the directory (a reference is held for the job)
	open   *os.File   // the root, already open
	link   *target    // a directory reached through a followed symlink
	abs    string
	rel    string // relative to the walk's root, "" for the root
	depth  int    // of the directory itself: 0 for the root
	ign    *IgnoreStack
	gitRel string // the directory relative to the top of the ignore stack ("" at the top)
	git    bool   // inside a git repository: .gitignore files count
}

type walk struct {
	ctx       context.Context
	opts      WalkOptions
	fn        func(*File) error
	stats     *WalkStats
	realRoots []string
	ws        *Workspace // opens the root and late reads, when set
	check     idCheck    // of the files read or stat-ed in their open folder (Workspace.walkCheck); nil without ws

	mu      sync.Mutex
	cond    *sync.Cond
	queue   []dirJob
	pending int // directories queued or being read
	err     error
	visited map[string]bool // real paths of directories entered through links
}

type topStack struct {
	stack *IgnoreStack
	rel   string // the root relative to the top of the stack
	git   bool
}

// topStack builds the ignore stack in force at root: when root is inside a
// git repository, from the repository's top down to root's parent.
func (w *walk) topStack(root string) topStack {
	if w.opts.IncludeIgnored {
		return topStack{}
	}
	top := FindRepo(root)
	if top == "" {
		return topStack{stack: NewIgnoreStack(nil, nil)}
	}
	exclude := excludeRules(top)
	rel, err := filepath.Rel(top, root)
	if err != nil || rel == "." {
		return topStack{stack: NewIgnoreStack(nil, exclude), git: true}
	}
	rel = filepath.ToSlash(rel)
	s := NewIgnoreStack(readIgnoreFiles(top, nil, true), exclude)
	parts := strings.Split(rel, "/")
	dir := ""
	for _, p := range parts[:len(parts)-1] {
		if dir == "" {
			dir = p
		} else {
			dir += "/" + p
		}
		s = s.Child(dir, readIgnoreFiles(filepath.Join(top, filepath.FromSlash(dir)), nil, true))
	}
	return topStack{stack: s, rel: rel, git: true}
}

func (w *walk) run(first dirJob) {
	n := w.opts.Workers
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	w.cond = sync.NewCond(&w.mu)
	w.queue = append(w.queue, first)
	w.pending = 1
	stop := context.AfterFunc(w.ctx, func() {
		w.mu.Lock()
		w.cond.Broadcast()
		w.mu.Unlock()
	})
	defer stop()
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.worker(i)
		}()
	}
	wg.Wait()
	// Jobs left by an error or a cancellation still hold their parents.
	for _, j := range w.queue {
		j.drop()
	}
	w.queue = nil
}

// drop releases what a job holds when it will not run.
func (j dirJob) drop() {
	j.parent.release()
	if j.open != nil {
		j.open.Close()
	}
}

// openJob opens and lists a job's directory and releases its parent.
func (w *walk) openJob(job dirJob) (*dirHandle, []dirEntry, error) {
	switch {
	case job.open != nil:
		return openDirFile(job.open, job.abs)
	case job.link != nil:
		f, err := openFileBeneath(job.link.root, job.link.rel, job.abs, os.O_RDONLY, 0)
		if err != nil {
			return nil, nil, err
		}
		return openDirFile(f, job.abs)
	case job.parent != nil:
		defer job.parent.release()
		return openDirAt(job.parent, filepath.Base(job.abs), job.abs)
	}
	return openDir(job.abs)
}

func (w *walk) worker(id int) {
	for {
		w.mu.Lock()
		for len(w.queue) == 0 && w.pending > 0 && w.err == nil && w.ctx.Err() == nil {
			w.cond.Wait()
		}
		if len(w.queue) == 0 || w.err != nil || w.ctx.Err() != nil {
			w.mu.Unlock()
			return
		}
		job := w.queue[len(w.queue)-1]
		w.queue = w.queue[:len(w.queue)-1]
		w.mu.Unlock()

		subdirs, err := w.readDir(job, id)

		w.mu.Lock()
		if err != nil && w.err == nil {
			w.err = err
		}
		w.queue = append(w.queue, subdirs...)
		w.pending += len(subdirs) - 1
		if w.pending == 0 || err != nil {
			w.cond.Broadcast()
		} else {
			for range subdirs {
				w.cond.Signal()
			}
		}
		w.mu.Unlock()
	}
}

// readDir reads one directory, reports its entries and returns the
// subdirectories to walk.
func (w *walk) readDir(job dirJob, worker int) ([]dirJob, error) {
	if w.ctx.Err() != nil {
		job.drop()
		return nil, nil
	}
	dir, entries, err := w.openJob(job)
	if err != nil {
		w.stats.Errors.Add(1)
		return nil, nil
	}
	defer dir.release()
	w.stats.Dirs.Add(1)
	ign := job.ign
	if !w.opts.IncludeIgnored {
		var names map[string]bool
		for _, e := range entries {
			n := e.name
			if len(n) > 0 && n[0] == '.' && (n == ".gitignore" || n == ".ignore" || n == ".rgignore") {
				if names == nil {
					names = map[string]bool{}
				}
				names[n] = true
			}
		}
		if names != nil {
			rules := readIgnoreFiles(job.abs, func(n string) bool { return names[n] }, job.git)
			ign = job.ign.Child(job.gitRel, rules)
		}
	}
	var subdirs []dirJob
	depth := job.depth + 1
	for _, e := range entries {
		name := e.name
		if name == ".git" && !w.opts.IncludeGit {
			continue
		}
		hidden := name[0] == '.' && !w.opts.IncludeHidden
		if hidden && w.opts.Filter == nil {
			w.stats.Hidden.Add(1)
			continue
		}
		typ := e.typ
		rel := name
		if job.rel != "" {
			rel = job.rel + "/" + name
		}
		var link *target
		if typ&fs.ModeSymlink != 0 && w.opts.FollowSymlinks {
			typ, link = w.follow(job.abs + string(filepath.Separator) + name)
		}
		isDir := typ&fs.ModeDir != 0
		var verdict Verdict
		if w.opts.Filter != nil {
			verdict = w.opts.Filter(rel, isDir)
			if verdict&Skip != 0 {
				continue
			}
			if hidden && verdict&KeepHidden == 0 {
				w.stats.Hidden.Add(1)
				continue
			}
		}
		abs := job.abs + string(filepath.Separator) + name
		var gitRel string // the ignore rules' path: not needed without them
		if !w.opts.IncludeIgnored {
			gitRel = name
			if job.gitRel != "" {
				gitRel = job.gitRel + "/" + name
			}
			if verdict&KeepIgnored == 0 && ign.Ignored(gitRel, isDir) {
				w.stats.Ignored.Add(1)
				continue
			}
		}
		f := &File{Path: abs, Rel: rel, Name: name, Depth: depth, Type: typ, Worker: worker, w: w, dir: dir, link: link}
		if isDir {
			if w.opts.Prune != nil && !w.opts.Prune(rel) {
				continue
			}
			descend := w.opts.MaxDepth <= 0 || depth < w.opts.MaxDepth
			if w.opts.Dirs {
				if err := w.fn(f); err != nil {
					if errors.Is(err, fs.SkipDir) {
						continue
					}
					return subdirs, err
				}
			}
			if descend {
				sub := dirJob{abs: abs, rel: rel, depth: depth, ign: ign, gitRel: gitRel, git: job.git, link: link}
				if link == nil {
					dir.acquire()
					sub.parent = dir
				}
				subdirs = append(subdirs, sub)
			}
			continue
		}
		if typ&fs.ModeType == 0 && w.opts.MaxFileBytes > 0 && !w.opts.ReadContent {
			if fi, err := f.Info(); err == nil && fi.Size() > w.opts.MaxFileBytes {
				w.stats.TooLarge.Add(1)
				continue
			}
		}
		if w.ws != nil && w.opts.ReadContent && typ&fs.ModeType == 0 && w.openSensitive(f) {
			continue
		}
		w.stats.Files.Add(1)
		if err := w.fn(f); err != nil && !errors.Is(err, fs.SkipDir) {
			return subdirs, err
		}
		if w.ctx.Err() != nil {
			for _, j := range subdirs {
				j.drop()
			}
			return nil, nil
		}
	}
	return subdirs, nil
}

// openSensitive reports whether f, in a walk of the workspace that reads
// content, is open in the editor and a sensitive file under another name:
// its reader would take the buffer's text without opening the file, so
// the identity check of File.Read would not see it.
func (w *walk) openSensitive(f *File) bool {
	if _, open := w.ws.Overlays.Get(f.Path); !open {
		return false
	}
	fi, err := f.Info()
	if err != nil {
		return false
	}
	st, ok := statOf(fi)
	return w.ws.checkStat(f.Path, st, ok) != nil
}

// follow resolves a symlink: the target's type when it is inside the roots
// (a directory only the first time a link reaches it) and where it leads,
// which the walk then opens beneath that root without following any
// further symlink; fs.ModeSymlink otherwise.
func (w *walk) follow(abs string) (fs.FileMode, *target) {
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return fs.ModeSymlink, nil
	}
	var t *target
	for _, r := range w.realRoots {
		if rel, ok := Within(r, real); ok {
			t = &target{root: r, rel: filepath.ToSlash(rel)}
			break
		}
	}
	if t == nil {
		return fs.ModeSymlink, nil
	}
	fi, err := lstatBeneath(t.root, t.rel, real)
	if err != nil || fi.Mode()&fs.ModeSymlink != 0 {
		return fs.ModeSymlink, nil
	}
	if fi.IsDir() {
		w.mu.Lock()
		seen := w.visited[real]
		if w.visited == nil {
			w.visited = map[string]bool{}
		}
		w.visited[real] = true
		w.mu.Unlock()
		if seen {
			return fs.ModeSymlink, nil
		}
	}
	return fi.Mode().Type(), t
}

// Len returns the number of rules of the stack's own level.
func (s *IgnoreStack) Len() int {
	if s == nil {
		return 0
	}
	return s.rules.Len()
}
