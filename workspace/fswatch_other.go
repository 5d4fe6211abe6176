//go:build !linux

package workspace

import "errors"

// DirWatcher reports changes below directories; on this system there is
// none (NewDirWatcher fails), and callers stat files instead.
type DirWatcher struct{}

// ErrWatchLimit is Add's error when the system's watches run out.
var ErrWatchLimit = errors.New("no watches left")

// NewDirWatcher fails with ErrWatchUnsupported.
func NewDirWatcher() (*DirWatcher, error) { return nil, ErrWatchUnsupported }

func (w *DirWatcher) Add(dir string) error      { return ErrWatchUnsupported }
func (w *DirWatcher) RemoveTree(dir string)     {}
func (w *DirWatcher) Watching(dir string) bool  { return false }
func (w *DirWatcher) Len() int                  { return 0 }
func (w *DirWatcher) Drain(fn func(WatchEvent)) {}
func (w *DirWatcher) Wait(timeoutMs int)        {}
func (w *DirWatcher) Close()                    {}
