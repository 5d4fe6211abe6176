package workspace

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// DirWatcher reports changes below the directories it was given (inotify):
// one watch per directory, no recursion of its own, so that the caller's
// walk rules (ignore files, hidden and sensitive paths) decide which
// directories are watched. Its events are read by the caller (Drain), not
// pushed: a Drain returns every event of a change the kernel had queued
// when it was called, which is what lets a search that drains first see
// every write that completed before it started. It is safe for concurrent
// use.
//
// Limits: each directory takes one of the user's inotify watches
// (/proc/sys/fs/inotify/max_user_watches); Add returns ErrWatchLimit when
// they run out, and the caller must then stop trusting the watcher. When
// the kernel's queue overflows, Drain reports an Overflow event: anything
// may have changed.
type DirWatcher struct {
	mu sync.Mutex
	fd int
	// wake is an eventfd that Close signals: it ends a Wait at once
	// (closing fd does not end a poll of it, which went on to its timeout
	// and held up a session's end by as much).
	wake   int
	byWD   map[int32]string
	byPath map[string]int32
	buf    []byte
}

// ErrWatchLimit is Add's error when the system's watches run out.
var ErrWatchLimit = errors.New("no inotify watches left (fs.inotify.max_user_watches)")

const watchMask = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MODIFY | unix.IN_CLOSE_WRITE | unix.IN_MOVED_FROM |
	unix.IN_MOVED_TO | unix.IN_ATTRIB | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_ONLYDIR | unix.IN_DONT_FOLLOW

// NewDirWatcher returns a watcher that watches nothing yet.
func NewDirWatcher() (*DirWatcher, error) {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("inotify: %w", err)
	}
	wake, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("eventfd: %w", err)
	}
	return &DirWatcher{fd: fd, wake: wake, byWD: map[int32]string{}, byPath: map[string]int32{}, buf: make([]byte, 64<<10)}, nil
}

// Add watches the directory dir (an absolute path; a symlink is not
// followed).
func (w *DirWatcher) Add(dir string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fd < 0 {
		return errors.New("watcher closed")
	}
	wd, err := unix.InotifyAddWatch(w.fd, dir, watchMask)
	if err != nil {
		if errors.Is(err, unix.ENOSPC) {
			return ErrWatchLimit
		}
		return fmt.Errorf("watch %s: %w", dir, err)
	}
	if old, ok := w.byWD[int32(wd)]; ok && old != dir {
		delete(w.byPath, old)
	}
	w.byWD[int32(wd)] = dir
	w.byPath[dir] = int32(wd)
	return nil
}

// RemoveTree stops watching dir and the directories below it.
func (w *DirWatcher) RemoveTree(dir string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for p, wd := range w.byPath {
		if p == dir || len(p) > len(dir) && p[:len(dir)] == dir && p[len(dir)] == filepath.Separator {
			if w.fd >= 0 {
				unix.InotifyRmWatch(w.fd, uint32(wd))
			}
			delete(w.byPath, p)
			delete(w.byWD, wd)
		}
	}
}

// Watching reports whether dir has a watch.
func (w *DirWatcher) Watching(dir string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, ok := w.byPath[dir]
	return ok
}

// Len returns the number of directories watched.
func (w *DirWatcher) Len() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.byPath)
}

// Drain calls fn with every event queued now, without blocking, and
// returns when the queue is empty.
func (w *DirWatcher) Drain(fn func(WatchEvent)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for w.fd >= 0 {
		n, err := unix.Read(w.fd, w.buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n <= 0 {
			return
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&w.buf[off]))
			nameLen := int(ev.Len)
			name := ""
			if nameLen > 0 && off+unix.SizeofInotifyEvent+nameLen <= n {
				b := w.buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+nameLen]
				for i, c := range b {
					if c == 0 {
						b = b[:i]
						break
					}
				}
				name = string(b)
			}
			off += unix.SizeofInotifyEvent + nameLen
			if ev.Mask&unix.IN_Q_OVERFLOW != 0 {
				fn(WatchEvent{Overflow: true})
				continue
			}
			dir, ok := w.byWD[ev.Wd]
			if !ok {
				continue
			}
			if ev.Mask&unix.IN_IGNORED != 0 {
				delete(w.byWD, ev.Wd)
				if w.byPath[dir] == ev.Wd {
					delete(w.byPath, dir)
				}
				continue
			}
			p := dir
			if name != "" {
				p = dir + string(filepath.Separator) + name
			}
			fn(WatchEvent{Path: p})
		}
	}
}

// Wait blocks until events are queued, the watcher is closed or about
// timeoutMs milliseconds passed.
func (w *DirWatcher) Wait(timeoutMs int) {
	w.mu.Lock()
	fd, wake := w.fd, w.wake
	w.mu.Unlock()
	if fd < 0 {
		return
	}
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}, {Fd: int32(wake), Events: unix.POLLIN}}
	unix.Poll(fds, timeoutMs)
}

// Close releases the watches and ends a Wait; Drain then reports nothing.
func (w *DirWatcher) Close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fd >= 0 {
		// The signal before the close: a Wait polling wake returns.
		add := [8]byte{1} // a nonzero 64-bit count, in either byte order
		unix.Write(w.wake, add[:])
		unix.Close(w.fd)
		unix.Close(w.wake)
		w.fd, w.wake = -1, -1
	}
	w.byWD, w.byPath = map[int32]string{}, map[string]int32{}
}
