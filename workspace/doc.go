// Package workspace is what the tools see of the user's project: the roots,
// the merged configuration, the overlays of documents open in the editor,
// and the rules that confine every path argument to the roots.
//
// Everything here is safe for concurrent use. Paths handed out are absolute,
// cleaned, and inside a root; text handed out for an open document is the
// editor's buffer, not the disk.
package workspace
