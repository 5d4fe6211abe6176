package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// PathError is a path argument the rules refuse. Code is INVALID_PATH or
// SENSITIVE_PATH, the ToolResult error codes.
type PathError struct {
	Code   string
	Path   string
	Reason string
}

func (e *PathError) Error() string { return fmt.Sprintf("%s: %s", e.Path, e.Reason) }

// ErrorCode returns the ToolResult error code.
func (e *PathError) ErrorCode() string { return e.Code }

func invalid(p, format string, args ...any) error {
	return &PathError{Code: "INVALID_PATH", Path: p, Reason: fmt.Sprintf(format, args...)}
}

// allowedRoots are the workspace roots and the configured paths.allow.
func (w *Workspace) allowedRoots() []string {
	roots := w.Roots()
	for _, a := range w.Config().Paths.Allow {
		if filepath.IsAbs(a) {
			roots = append(roots, filepath.Clean(a))
		}
	}
	return roots
}

// Resolve turns a path argument into an absolute path inside an allowed
// root. It accepts relative paths (with several roots, a first segment that
// is a root's name selects that root, as Rel writes them; any other
// relative path is relative to the first root), absolute paths inside a
// root or a paths.allow root, and file:// URIs. It refuses, with a
// *PathError: NUL bytes, "~", ".." escapes, absolute paths outside, symlinks
// (of the file or of any parent) whose target is outside, paths matching
// the sensitive globs, checked on the path as given and on the resolved one,
// and an existing file that is a sensitive one under another name (a hard
// link; see sensitive.go).
// The file need not exist: for a new file the nearest existing parent is
// resolved and checked.
func (w *Workspace) Resolve(arg string) (string, error) {
	if arg == "" {
		return "", invalid(arg, "empty path")
	}
	if strings.IndexByte(arg, 0) >= 0 {
		return "", invalid(strings.ReplaceAll(arg, "\x00", `\0`), "path contains a NUL byte")
	}
	p := arg
	if strings.HasPrefix(p, "file:") {
		fp, err := URIToPath(p)
		if err != nil {
			return "", invalid(arg, "%v", err)
		}
		p = fp
		// %00 decodes to a NUL byte.
		if strings.IndexByte(p, 0) >= 0 {
			return "", invalid(arg, "path contains a NUL byte")
		}
	}
	if strings.HasPrefix(p, "~") {
		return "", invalid(arg, "~ is not expanded; give a path relative to the workspace root")
	}
	roots := w.allowedRoots()
	if len(roots) == 0 {
		return "", invalid(arg, "there is no workspace root")
	}
	if !filepath.IsAbs(p) {
		if root, rest, ok := w.rootOf(p); ok {
			p = filepath.Join(root, rest)
		} else {
			p = filepath.Join(roots[0], p)
		}
	}
	p = filepath.Clean(p)
	root, rel, ok := containing(roots, p)
	if !ok {
		if !filepath.IsAbs(arg) && !strings.HasPrefix(arg, "file:") {
			return "", invalid(arg, "path escapes the workspace root")
		}
		return "", invalid(arg, "path is outside the workspace roots %s", strings.Join(roots, ", "))
	}
	if err := w.checkSensitive(arg, root, rel); err != nil {
		return "", err
	}
	real, err := realPath(p)
	if err != nil {
		return "", invalid(arg, "%v", err)
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		realRoot = root
	}
	realRel, ok := Within(realRoot, real)
	if !ok {
		// A symlink may lead into another allowed root.
		if realRoot, realRel, ok = containingReal(roots, real); !ok {
			return "", invalid(arg, "path resolves through a symlink to %s, outside the workspace", real)
		}
	}
	if err := w.checkSensitive(arg, realRoot, realRel); err != nil {
		return "", err
	}
	// The file itself may be a sensitive one under another name.
	if err := w.checkPathID(arg, real); err != nil {
		return "", err
	}
	return p, nil
}

// containing returns the first root that holds p and p relative to it.
func containing(roots []string, p string) (string, string, bool) {
	for _, r := range roots {
		if rel, ok := Within(r, p); ok {
			return r, rel, true
		}
	}
	return "", "", false
}

func containingReal(roots []string, real string) (string, string, bool) {
	for _, r := range roots {
		rr, err := filepath.EvalSymlinks(r)
		if err != nil {
			continue
		}
		if rel, ok := Within(rr, real); ok {
			return rr, rel, true
		}
	}
	return "", "", false
}

// realPath resolves every symlink of p (absolute). When p does not exist,
// the nearest existing parent is resolved and the missing rest appended; a
// dangling symlink is resolved to where it points, so that a write through
// it is checked against where it would land. It looks at each component
// once (a path of n components costs O(n) system calls plus the links'
// own), and gives up after maxLinkHops links, so a loop of links ends.
func realPath(p string) (string, error) {
	vol := filepath.VolumeName(p)
	dest := vol + string(filepath.Separator)
	rest := filepath.ToSlash(p[len(vol):])
	links, missing := 0, false
	for rest != "" {
		rest = strings.TrimLeft(rest, "/")
		comp := rest
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			comp, rest = rest[:i], rest[i:]
		} else {
			rest = ""
		}
		switch comp {
		case "", ".":
			continue
		case "..":
			dest = filepath.Dir(dest)
			continue
		}
		next := filepath.Join(dest, comp)
		if missing {
			dest = next
			continue
		}
		fi, err := os.Lstat(next)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				missing, dest = true, next
				continue
			}
			return "", fmt.Errorf("resolve %s: %w", next, err)
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			dest = next
			continue
		}
		if links++; links > maxLinkHops {
			return "", fmt.Errorf("resolve %s: too many levels of symbolic links", p)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", fmt.Errorf("read link %s: %w", next, err)
		}
		if filepath.IsAbs(target) {
			tv := filepath.VolumeName(target)
			dest, target = tv+string(filepath.Separator), target[len(tv):]
		}
		rest = filepath.ToSlash(target) + "/" + rest
	}
	return dest, nil
}

// maxLinkHops bounds the symlinks realPath follows for one path, like the
// kernel's ELOOP limit (40).
const maxLinkHops = 40

// IsSensitive reports whether rel (relative to a root, any separator)
// matches a sensitive glob, or names an existing file that is a sensitive
// one under another name (sensitive.go). A pattern without a slash matches
// a file or folder name at any depth, like a .gitignore pattern; on a root
// whose file system ignores case, in any case. With several roots, a path in
// the form Rel writes (the root's name first) is also checked without that
// name, since the globs are relative to a root.
func (w *Workspace) IsSensitive(rel string) bool {
	rel = filepath.ToSlash(rel)
	if root, rest, ok := w.rootOf(rel); ok {
		if rest := filepath.ToSlash(rest); rest != "." && w.sensitiveIn(root, rest) {
			return true
		}
	}
	return w.sensitiveIn(w.Root(), rel)
}

// sensitiveIn is IsSensitive for rel relative to root.
func (w *Workspace) sensitiveIn(root, rel string) bool {
	if path.IsAbs(rel) {
		return w.matchSensitive(rel, false)
	}
	if w.matchSensitive(rel, root != "" && w.caseFold(root)) {
		return true
	}
	if root == "" {
		return false
	}
	abs := filepath.Join(root, filepath.FromSlash(rel))
	if _, ok := Within(root, abs); !ok || abs == root {
		return false
	}
	return w.checkPathID(rel, abs) != nil
}

// matchSensitive reports whether rel (slash-separated, relative to a root)
// matches a sensitive glob, ignoring case when fold.
func (w *Workspace) matchSensitive(rel string, fold bool) bool {
	if fold {
		rel = strings.ToLower(rel)
	}
	parts := strings.Split(rel, "/")
	for _, pat := range w.Config().Paths.Sensitive {
		if fold {
			pat = strings.ToLower(pat)
		}
		if !strings.Contains(pat, "/") {
			for _, part := range parts {
				if ok, _ := path.Match(pat, part); ok {
					return true
				}
			}
			continue
		}
		pat = strings.TrimPrefix(pat, "/")
		if ok, _ := doublestar.Match(pat, rel); ok {
			return true
		}
		// "**/.ssh/**" must also refuse the folder itself.
		if ok, _ := doublestar.Match(pat, rel+"/x"); ok && strings.HasSuffix(pat, "/**") {
			return true
		}
	}
	return false
}

// checkSensitive refuses rel (relative to root) when it matches a
// sensitive glob, in any case on a root whose file system ignores case.
func (w *Workspace) checkSensitive(arg, root, rel string) error {
	if rel == "." {
		return nil
	}
	rel = filepath.ToSlash(rel)
	fold := w.caseFold(root)
	match := w.matchSensitive(rel, fold)
	if rest, ok := w.StripRootName(rel); !match && ok && rest != "." {
		// As IsSensitive: a first segment that names a root is also
		// left out.
		match = w.matchSensitive(rest, fold)
	}
	if match {
		return &PathError{Code: "SENSITIVE_PATH", Path: arg, Reason: "path matches a sensitive pattern (paths.sensitive); agents may not touch it"}
	}
	return nil
}
