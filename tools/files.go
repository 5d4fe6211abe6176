package tools

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"syscall"
	"time"
	"unsafe"

	"github.com/agentls/agentls/workspace"
)

// readRecord is what the model last saw of a file: the hash of the whole
// content, and the text itself when small enough to say later what changed.
type readRecord struct {
	Hash string
	Text *string
}

// maxRememberedText bounds the text kept per read file.
const maxRememberedText = 1 << 20

// RecordRead remembers that the model has seen content of path (the whole
// file): its hash, and the text when small.
func RecordRead(s *Session, path, content string) { recordRead(s, path, readRecordOf(content)) }

// readRecordOf is the record of having read content (the whole file).
func readRecordOf(content string) readRecord {
	rec := readRecord{Hash: hashText(content)}
	if len(content) <= maxRememberedText {
		rec.Text = &content
	}
	return rec
}

func recordRead(s *Session, path string, rec readRecord) {
	s.readsMu.Lock()
	defer s.readsMu.Unlock()
	s.reads[path] = rec
}

// landing marks the texts plan p is about to write as the session's own
// until the returned func is called: while an edit lands, the file holds
// text the model never read, which another call of the session must not
// take for a change from outside (checkFresh).
func landing(s *Session, p *workspace.Plan) (done func()) {
	if s == nil {
		return func() {}
	}
	marks := map[string]string{}
	for _, ch := range p.Changes {
		if ch.Op == workspace.OpCreate || ch.Op == workspace.OpModify {
			marks[ch.Path] = hashText(ch.NewText)
		}
	}
	s.readsMu.Lock()
	for path, h := range marks {
		s.landing[path] = h
	}
	s.readsMu.Unlock()
	return func() {
		s.readsMu.Lock()
		defer s.readsMu.Unlock()
		for path, h := range marks {
			if s.landing[path] == h {
				delete(s.landing, path)
			}
		}
	}
}

// readState returns, at one instant, what the model last read of path and
// whether current is what an edit of the session is writing there now
// (landing): read apart, an edit could land between the two. hash is
// current's hashText.
func readState(s *Session, path, current string) (rec readRecord, read, own bool, hash string) {
	h := hashText(current)
	s.readsMu.Lock()
	defer s.readsMu.Unlock()
	rec, read = s.reads[path]
	l, landing := s.landing[path]
	return rec, read, landing && l == h, h
}

// LastRead returns the hash of what the model last read of path.
func LastRead(s *Session, path string) (string, bool) {
	r, ok := lastRead(s, path)
	return r.Hash, ok
}

func lastRead(s *Session, path string) (readRecord, bool) {
	s.readsMu.Lock()
	defer s.readsMu.Unlock()
	r, ok := s.reads[path]
	return r, ok
}

// hashText is the hex SHA-256 of s, hashed in place (a large open
// buffer is hashed a few times per edit: a copy each time showed).
func hashText(s string) string {
	sum := sha256.Sum256(unsafe.Slice(unsafe.StringData(s), len(s))) // read only
	return hex.EncodeToString(sum[:])
}

// formatMtime is how results give a modification time: RFC 3339 in UTC,
// with nanoseconds (trailing zeros dropped).
func formatMtime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// fileError maps an os error about path to the code the model sees.
func fileError(rel string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return Errorf(FileNotFound, "%s does not exist", rel)
	case errors.Is(err, fs.ErrPermission):
		return Errorf(PermissionDenied, "%s: permission denied", rel)
	case errors.Is(err, syscall.ELOOP):
		// The confined open met a symlink where the path was resolved
		// without one: it changed during the call, or is a loop.
		return Errorf(InvalidPath, "%s: a component of the path is (or just became) a symlink that cannot be followed", rel)
	}
	return err
}

// statFile checks that path is a regular file.
func statFile(c *Call, rel, path string) (os.FileInfo, error) {
	fi, err := c.Workspace.Stat(path)
	if err != nil {
		return nil, fileError(rel, err)
	}
	return checkRegular(rel, fi)
}

// checkRegular refuses a directory or a special file.
func checkRegular(rel string, fi os.FileInfo) (os.FileInfo, error) {
	if fi.IsDir() {
		return nil, Errorf(NotAFile, "%s is a directory; use list_directory", rel)
	}
	if !fi.Mode().IsRegular() {
		return nil, Errorf(NotAFile, "%s is not a regular file", rel)
	}
	return fi, nil
}

// resolveArg resolves a path argument (Workspace.Resolve: confined to the
// workspace) and returns it with its root-relative form, as messages name
// it.
func resolveArg(c *Call, arg string) (path, rel string, err error) {
	path, err = c.Workspace.Resolve(arg)
	if err != nil {
		return "", "", err
	}
	return path, c.Workspace.Rel(path), nil
}

// resolveDir resolves a path argument that must name a directory;
// notDir is what the NOT_A_DIRECTORY error says after the path when it
// names something else.
func resolveDir(c *Call, arg, notDir string) (dir, rel string, err error) {
	dir, rel, err = resolveArg(c, arg)
	if err != nil {
		return "", "", err
	}
	fi, err := c.Workspace.Stat(dir)
	if err != nil {
		return "", "", fileError(rel, err)
	}
	if !fi.IsDir() {
		return "", "", Errorf(NotADirectory, "%s %s", rel, notDir)
	}
	return dir, rel, nil
}

// pathPair is the source and the destination of a copy or a move,
// resolved, with their root-relative forms.
type pathPair struct {
	from, to, fromRel, toRel string
}

// resolvePair resolves the source and destination arguments of a copy or
// a move (named fromField and toField in messages), which must differ.
func resolvePair(c *Call, fromField, from, toField, to string) (pathPair, error) {
	var p pathPair
	var err error
	if p.from, p.fromRel, err = resolveArg(c, from); err != nil {
		return pathPair{}, err
	}
	if p.to, p.toRel, err = resolveArg(c, to); err != nil {
		return pathPair{}, err
	}
	if p.from == p.to {
		return pathPair{}, Errorf(InvalidParams, "%s and %s are the same path (%s)", fromField, toField, p.fromRel)
	}
	return p, nil
}

// lstatIfAny is Lstat of path, without following a final symlink: nil
// when nothing is there, a coded error (fileError) when it cannot tell.
func lstatIfAny(c *Call, path, rel string) (os.FileInfo, error) {
	fi, err := c.Workspace.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, fileError(rel, err)
	}
	return fi, nil
}

// checkDest checks the destination of a copy or a move: nothing there, or
// something overwrite lets the call replace, which it returns (nil when
// nothing is there). A directory is never replaced (intoDir is the advice
// the error gives), nor is a file by a directory (dirSource).
func checkDest(c *Call, p pathPair, overwrite, dirSource bool, intoDir string) (os.FileInfo, error) {
	fi, err := lstatIfAny(c, p.to, p.toRel)
	switch {
	case err != nil || fi == nil:
		return nil, err
	case fi.IsDir():
		return nil, Errorf(AlreadyExists, "%s is an existing directory; %s", p.toRel, intoDir)
	case dirSource:
		return nil, Errorf(AlreadyExists, "%s exists and is a file; a directory cannot replace it", p.toRel)
	case !overwrite:
		return nil, Errorf(AlreadyExists, "%s already exists; pass overwrite: true to replace it", p.toRel)
	}
	return fi, nil
}

// freshText returns the text of an existing file now (currentText),
// failing with STALE_FILE when it changed since the model last read it
// (checkFresh; a file it never read passes).
func freshText(c *Call, path string) (string, error) {
	text, _, err := currentText(c, path)
	if err != nil {
		return "", err
	}
	return text, checkFresh(c, path, text)
}

// walkAll walks everything beneath dir, directories too: hidden, ignored
// and .git entries included, symlinks not followed, beneath the
// workspace's roots (Workspace.Walk). workers 0 is the walk's default.
func walkAll(c *Call, dir string, workers int, fn func(f *workspace.File) error) error {
	ctx := c.Ctx
	if ctx == nil {
		ctx = context.Background()
	}
	_, err := c.Workspace.Walk(ctx, dir, workspace.WalkOptions{IncludeHidden: true, IncludeIgnored: true, IncludeGit: true, Dirs: true, Workers: workers}, fn)
	return err
}
