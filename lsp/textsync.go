package lsp

import (
	"context"
	"encoding/json"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/agentls/agentls/workspace"
)

func (s *server) didOpen(_ context.Context, p protocol.DidOpenTextDocumentParams) error {
	path, err := workspace.URIToPath(string(p.TextDocument.URI))
	if err != nil {
		return err
	}
	s.ws.Overlays.Open(workspace.Document{
		URI: string(p.TextDocument.URI), Path: path, LanguageID: string(p.TextDocument.LanguageID),
		Version: p.TextDocument.Version, Text: p.TextDocument.Text,
	})
	return nil
}

// didChangeParams has its own type: the pinned protocol package's content
// change has a non-pointer Range, so it cannot tell a full-text change from
// an insertion at 0:0.
type didChangeParams struct {
	TextDocument struct {
		URI     string `json:"uri"`
		Version int32  `json:"version"`
	} `json:"textDocument"`
	ContentChanges []workspace.Change `json:"contentChanges"`
}

func (s *server) didChange(_ context.Context, p didChangeParams) error {
	path, err := workspace.URIToPath(p.TextDocument.URI)
	if err != nil {
		return err
	}
	return s.ws.Overlays.Change(path, p.TextDocument.Version, p.ContentChanges)
}

func (s *server) didClose(_ context.Context, p protocol.DidCloseTextDocumentParams) error {
	path, err := workspace.URIToPath(string(p.TextDocument.URI))
	if err != nil {
		return err
	}
	s.ws.Overlays.Close(path)
	s.diagnosticsWithdrawn(path)
	return nil
}

func (s *server) didSave(_ context.Context, p protocol.DidSaveTextDocumentParams) error {
	path, err := workspace.URIToPath(string(p.TextDocument.URI))
	if err != nil {
		return err
	}
	s.fileChangedOnDisk(path)
	return nil
}

type didChangeWatchedFilesParams struct {
	Changes []struct {
		URI string `json:"uri"`
	} `json:"changes"`
}

func (s *server) didChangeWatchedFiles(_ context.Context, p didChangeWatchedFilesParams) error {
	for _, c := range p.Changes {
		if path, err := workspace.URIToPath(c.URI); err == nil {
			s.fileChangedOnDisk(path)
		}
	}
	return nil
}

// fileChangedOnDisk reacts to a file the editor saved or saw change: the
// session's services follow it, and an open file's diagnostics are due.
func (s *server) fileChangedOnDisk(path string) {
	s.changedOnDisk(path, s.sess.FileChanged(path))
}

// changedOnDisk is what follows a change on disk the session handled:
// the configuration files that were not valid are told, and an open
// file's diagnostics are due.
func (s *server) changedOnDisk(path string, errs []error) {
	s.reportConfigErrors(errs)
	if _, open := s.ws.Overlays.Get(path); open {
		s.diagnosticsDue(path)
	}
}

type didChangeWorkspaceFoldersParams struct {
	Event struct {
		Added   []workspaceFolder `json:"added"`
		Removed []workspaceFolder `json:"removed"`
	} `json:"event"`
}

func (s *server) didChangeWorkspaceFolders(_ context.Context, p didChangeWorkspaceFoldersParams) error {
	removed := map[string]bool{}
	for _, f := range p.Event.Removed {
		if path, err := workspace.URIToPath(f.URI); err == nil {
			removed[path] = true
		}
	}
	var roots []workspace.Folder
	for _, r := range s.ws.Folders() {
		if !removed[r.Path] {
			roots = append(roots, r)
		}
	}
	for _, f := range p.Event.Added {
		path, err := workspace.URIToPath(f.URI)
		if err != nil {
			return err
		}
		roots = append(roots, workspace.Folder{Path: path, Name: f.Name})
	}
	errs, err := s.sess.SetFolders(roots)
	if err != nil {
		return err
	}
	s.republish()
	s.reportConfigErrors(errs)
	return nil
}

// syncCommand is the one command workspace/executeCommand runs. It does
// nothing: it exists for a client that sends its buffers' pending
// didChange lazily and, publicly, only before a request of its own (plain
// eglot: eglot-execute sends them, then the command). Like every request
// it is dispatched after the notifications sent before it are handled, so
// its answer tells that client the server has seen what the person typed.
// It is not advertised (executeCommandProvider), so that clients do not
// offer it to the person as a command.
const syncCommand = "agentls.sync"

type executeCommandParams struct {
	Command   string            `json:"command"`
	Arguments []json.RawMessage `json:"arguments,omitempty"`
}

func (s *server) executeCommand(_ context.Context, p executeCommandParams) (any, error) {
	if p.Command != syncCommand {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "workspace/executeCommand: unknown command %q (the server runs one: %s)", p.Command, syncCommand)
	}
	return nil, nil
}
