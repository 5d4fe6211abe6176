package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/agentls/agentls/session"
	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/workspace"
)

// initializeParams is the part of InitializeParams the server reads. It is
// its own type because the pinned protocol package lacks fields of LSP 3.16
// and later (changeAnnotationSupport) and types experimental as interface{}.
type initializeParams struct {
	RootURI          string            `json:"rootUri"`
	RootPath         string            `json:"rootPath"`
	WorkspaceFolders []workspaceFolder `json:"workspaceFolders"`
	Capabilities     struct {
		Workspace struct {
			ApplyEdit     bool `json:"applyEdit"`
			WorkspaceEdit struct {
				DocumentChanges         bool     `json:"documentChanges"`
				ResourceOperations      []string `json:"resourceOperations"`
				ChangeAnnotationSupport *struct {
					GroupsOnLabel bool `json:"groupsOnLabel"`
				} `json:"changeAnnotationSupport"`
			} `json:"workspaceEdit"`
			DidChangeWatchedFiles struct {
				DynamicRegistration bool `json:"dynamicRegistration"`
			} `json:"didChangeWatchedFiles"`
			Configuration bool        `json:"configuration"`
			Symbol        dynamicCaps `json:"symbol"`
		} `json:"workspace"`
		TextDocument struct {
			DocumentSymbol dynamicCaps `json:"documentSymbol"`
			Definition     dynamicCaps `json:"definition"`
			References     dynamicCaps `json:"references"`
			Hover          dynamicCaps `json:"hover"`
		} `json:"textDocument"`
		Window struct {
			ShowMessage  *struct{} `json:"showMessage"`
			ShowDocument *struct {
				Support bool `json:"support"`
			} `json:"showDocument"`
			WorkDoneProgress bool `json:"workDoneProgress"`
		} `json:"window"`
		Experimental struct {
			Agentls *agentlsCaps `json:"agentls"`
		} `json:"experimental"`
	} `json:"capabilities"`
	ClientInfo struct {
		Name string `json:"name"`
	} `json:"clientInfo"`
	InitializationOptions struct {
		Config             json.RawMessage `json:"config"`
		Model              tools.Model     `json:"model"`
		Agent              string          `json:"agent"`
		ClientCapabilities *agentlsCaps    `json:"clientCapabilities"`
	} `json:"initializationOptions"`
}

// dynamicCaps is the part of a feature's client capabilities that says
// whether it may be registered later (client/registerCapability).
type dynamicCaps struct {
	DynamicRegistration bool `json:"dynamicRegistration"`
}

type workspaceFolder struct {
	URI  string `json:"uri"`
	Name string `json:"name"`
}

// agentlsCaps is experimental.agentls: what an agentls client implements.
type agentlsCaps struct {
	ApprovalRequest bool `json:"approvalRequest"`
	SaveAfterApply  bool `json:"saveAfterApply"`
	NativePreview   bool `json:"nativePreview"`
}

// clientCaps is what the server keeps of the client's capabilities.
type clientCaps struct {
	agentlsCaps
	ApplyEdit          bool
	DocumentChanges    bool
	ResourceOperations map[string]bool
	ChangeAnnotations  bool
	WorkDoneProgress   bool
	ShowDocument       bool
	WatchedFilesDyn    bool
	// FeaturesDyn names the lsp.features the client lets the server
	// register after initialize (registration.go).
	FeaturesDyn map[string]bool
}

// ProtocolVersion is experimental.agentls.protocolVersion.
const ProtocolVersion = 1

// initialize starts the session: roots, client capabilities, the
// configuration and the tools' environment. Configuration errors are
// reported (showMessage) after the result is sent.
func (s *server) initialize(ctx context.Context, p initializeParams) (*protocol.InitializeResult, error) {
	s.mu.Lock()
	if s.state != stateNew {
		s.mu.Unlock()
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidRequest, "initialize was already sent")
	}
	s.mu.Unlock()
	roots, err := rootsOf(p)
	if err != nil {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "initialize: %v", err)
	}
	named := len(roots) > 0 // only a session on roots the editor named is published
	if len(roots) == 0 && s.opts.DefaultRoot != "" {
		roots = []workspace.Folder{{Path: s.opts.DefaultRoot}}
	}
	c := p.Capabilities
	caps := clientCaps{
		ApplyEdit:          c.Workspace.ApplyEdit,
		DocumentChanges:    c.Workspace.WorkspaceEdit.DocumentChanges,
		ResourceOperations: map[string]bool{},
		ChangeAnnotations:  c.Workspace.WorkspaceEdit.ChangeAnnotationSupport != nil,
		WorkDoneProgress:   c.Window.WorkDoneProgress,
		ShowDocument:       c.Window.ShowDocument != nil && c.Window.ShowDocument.Support,
		WatchedFilesDyn:    c.Workspace.DidChangeWatchedFiles.DynamicRegistration,
		FeaturesDyn: map[string]bool{
			"documentSymbol":  c.TextDocument.DocumentSymbol.DynamicRegistration,
			"workspaceSymbol": c.Workspace.Symbol.DynamicRegistration,
			"definition":      c.TextDocument.Definition.DynamicRegistration,
			"references":      c.TextDocument.References.DynamicRegistration,
			"hover":           c.TextDocument.Hover.DynamicRegistration,
		},
	}
	for _, op := range c.Workspace.WorkspaceEdit.ResourceOperations {
		caps.ResourceOperations[op] = true
	}
	if a := c.Experimental.Agentls; a != nil {
		caps.agentlsCaps = *a
	} else if a := p.InitializationOptions.ClientCapabilities; a != nil {
		caps.agentlsCaps = *a
	}

	// The session: roots, configuration (the files, then
	// initializationOptions.config), the tools' services.
	var ed tools.Editor
	if caps.ApplyEdit {
		ed = &editor{s: s}
	}
	sess, errs, err := session.New(session.Options{
		Folders: roots, UserConfig: s.opts.ConfigFile, Settings: p.InitializationOptions.Config,
		Agent: p.InitializationOptions.Agent, Model: p.InitializationOptions.Model,
		Approver: &approver{s: s}, Editor: ed, Events: tools.EventsFunc(s.sendEvent),
		Runner: s.opts.Runner, SearchCache: true, Log: s.log,
		Watch: &session.DiskWatch{Changed: s.watcherSaw, Lost: func() { go s.syncRegistrations() }},
	})
	if err != nil {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "initialize: %v", err)
	}
	s.mu.Lock()
	s.caps = caps
	s.sess, s.ws = sess, sess.Workspace()
	s.state = stateRunning
	s.mu.Unlock()
	// The builds of the indexes start now, not at initialized: the walk
	// and the reads begin while the reply and the client's initialized
	// travel. Their progress waits for initialized (awaitInitialized).
	s.searchIndexProgress() // before the code index's build, which may start the search index's
	s.startIndex()
	s.sess.WarmUp()

	n := len(sess.Tools(""))
	result := protocol.InitializeResult{
		Capabilities: protocol.ServerCapabilities{
			TextDocumentSync: protocol.TextDocumentSyncOptions{
				OpenClose: true,
				Change:    protocol.TextDocumentSyncKindIncremental,
				Save:      &protocol.SaveOptions{IncludeText: false},
			},
			Workspace: &protocol.ServerCapabilitiesWorkspace{
				WorkspaceFolders: &protocol.ServerCapabilitiesWorkspaceFolders{Supported: true, ChangeNotifications: true},
			},
			Experimental: map[string]any{"agentls": map[string]any{"protocolVersion": ProtocolVersion, "tools": n}},
		},
		ServerInfo: &protocol.ServerInfo{Name: "agentls", Version: s.opts.Version},
	}
	s.indexCapabilities(&result.Capabilities)
	s.reg.advertised(s)
	if named {
		s.publish(p.ClientInfo.Name)
	}
	s.log.Info("initialized", "roots", s.ws.Roots(), "caps", fmt.Sprintf("%+v", caps), "tools", n)
	afterReply(ctx, func() {
		for _, e := range errs {
			s.reportConfigError(e)
		}
	})
	return &result, nil
}

func (s *server) initialized(context.Context, ignored) error {
	s.idx.initialized.closeOnce()
	s.followRegistrations()
	return nil
}

// rootsOf reads the roots: workspaceFolders (with their names), else
// rootUri, else rootPath.
func rootsOf(p initializeParams) ([]workspace.Folder, error) {
	var roots []workspace.Folder
	for _, f := range p.WorkspaceFolders {
		path, err := workspace.URIToPath(f.URI)
		if err != nil {
			return nil, fmt.Errorf("workspace folder: %w", err)
		}
		roots = append(roots, workspace.Folder{Path: path, Name: f.Name})
	}
	if len(roots) > 0 {
		return roots, nil
	}
	if p.RootURI != "" {
		path, err := workspace.URIToPath(p.RootURI)
		if err != nil {
			return nil, fmt.Errorf("rootUri: %w", err)
		}
		return []workspace.Folder{{Path: path}}, nil
	}
	if p.RootPath != "" {
		return []workspace.Folder{{Path: filepath.Clean(p.RootPath)}}, nil
	}
	return nil, nil
}
