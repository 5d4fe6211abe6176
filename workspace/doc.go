// Package workspace is what the tools see of the user's project: the roots,
// the merged configuration, the overlays of documents open in the editor,
// the rules that confine every path argument to the roots, the file
// operations that hold those rules under races (beneath*.go), and the
// events the session's services follow (Watch: files changed on disk,
// roots or configuration replaced; Overlays.Watch: buffers).
//
// Everything here is safe for concurrent use. Paths handed out are absolute,
// cleaned, and inside a root; text handed out for an open document is the
// editor's buffer, not the disk.
package workspace
