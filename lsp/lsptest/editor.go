package lsptest

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"unicode/utf16"

	"github.com/agentls/agentls/workspace"
)

// doc is an open document of the fake editor.
type doc struct {
	text    string
	version int32
}

// OpenDoc opens path in the fake editor with text (unsaved when it differs
// from the disk) and tells the server.
func (c *Client) OpenDoc(ctx context.Context, path, text string) error {
	c.mu.Lock()
	if c.docs == nil {
		c.docs = map[string]*doc{}
	}
	c.docs[path] = &doc{text: text, version: 1}
	c.mu.Unlock()
	return c.Open(ctx, path, text)
}

// Doc returns the fake editor's buffer of path.
func (c *Client) Doc(path string) (text string, version int32, open bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	d, ok := c.docs[path]
	if !ok {
		return "", 0, false
	}
	return d.text, d.version, true
}

// ApplyEditParams is the decoded workspace/applyEdit request.
type ApplyEditParams struct {
	Label string `json:"label"`
	Edit  struct {
		DocumentChanges []json.RawMessage `json:"documentChanges"`
		// Changes is the plain form (uri → text edits) for clients
		// without documentChanges.
		Changes           map[string]json.RawMessage `json:"changes"`
		ChangeAnnotations map[string]struct {
			Label             string `json:"label"`
			NeedsConfirmation bool   `json:"needsConfirmation"`
		} `json:"changeAnnotations"`
	} `json:"edit"`
}

// TextDocumentEdit is one entry of documentChanges that edits text.
type TextDocumentEdit struct {
	TextDocument struct {
		URI     string `json:"uri"`
		Version *int32 `json:"version"`
	} `json:"textDocument"`
	Edits []struct {
		Range        workspace.Range `json:"range"`
		NewText      string          `json:"newText"`
		AnnotationID string          `json:"annotationId"`
	} `json:"edits"`
}

// ApplyEdit applies a workspace/applyEdit like an editor: text edits go to
// the open buffer (the version must match) or to the file, resource
// operations to the disk. Open buffers it changes are reported to the server
// with didChange; with save, buffers that had no unsaved changes before are
// written and reported with didSave (saveAfterApply).
func (c *Client) ApplyEdit(ctx context.Context, raw json.RawMessage, save bool) ApplyResult {
	var p ApplyEditParams
	if err := json.Unmarshal(raw, &p); err != nil {
		return ApplyResult{FailureReason: err.Error()}
	}
	for i, ch := range p.Edit.DocumentChanges {
		var kind struct {
			Kind   string `json:"kind"`
			URI    string `json:"uri"`
			OldURI string `json:"oldUri"`
			NewURI string `json:"newUri"`
		}
		json.Unmarshal(ch, &kind)
		var err error
		switch kind.Kind {
		case "create":
			path, _ := workspace.URIToPath(kind.URI)
			os.MkdirAll(filepath.Dir(path), 0o755)
			err = os.WriteFile(path, nil, 0o644)
		case "delete":
			path, _ := workspace.URIToPath(kind.URI)
			err = os.RemoveAll(path)
		case "rename":
			from, _ := workspace.URIToPath(kind.OldURI)
			to, _ := workspace.URIToPath(kind.NewURI)
			if err = os.MkdirAll(filepath.Dir(to), 0o755); err == nil {
				err = os.Rename(from, to)
			}
			if err == nil {
				err = c.renameDocs(ctx, from, to)
			}
		case "":
			var te TextDocumentEdit
			if err = json.Unmarshal(ch, &te); err == nil {
				err = c.applyTextEdit(ctx, te, save)
			}
		default:
			err = fmt.Errorf("unknown resource operation %q", kind.Kind)
		}
		if err != nil {
			return ApplyResult{FailureReason: fmt.Sprintf("change %d: %v", i, err)}
		}
	}
	// The plain changes map, applied when there are no documentChanges
	// (as clients without documentChanges do).
	if len(p.Edit.DocumentChanges) == 0 {
		for _, uri := range slices.Sorted(maps.Keys(p.Edit.Changes)) {
			var te TextDocumentEdit
			te.TextDocument.URI = uri
			if err := json.Unmarshal(p.Edit.Changes[uri], &te.Edits); err != nil {
				return ApplyResult{FailureReason: err.Error()}
			}
			if err := c.applyTextEdit(ctx, te, save); err != nil {
				return ApplyResult{FailureReason: fmt.Sprintf("%s: %v", uri, err)}
			}
		}
	}
	return ApplyResult{Applied: true}
}

// renameDocs moves the buffers of from (a file, or the files below a
// folder) to to, keeping their text, unsaved or not, as editors do, and
// tells the server: didClose of the old name, didOpen of the new one.
func (c *Client) renameDocs(ctx context.Context, from, to string) error {
	c.mu.Lock()
	moved := map[string]string{} // old path → new path
	for p := range c.docs {
		if p == from {
			moved[p] = to
		} else if rest, ok := strings.CutPrefix(p, from+string(filepath.Separator)); ok {
			moved[p] = filepath.Join(to, rest)
		}
	}
	type open struct {
		path, text string
		version    int32
	}
	var opened []open
	for old, new := range moved {
		d := c.docs[old]
		delete(c.docs, old)
		c.docs[new] = d
		opened = append(opened, open{new, d.text, d.version})
	}
	c.mu.Unlock()
	for old := range moved {
		if err := c.Notify(ctx, "textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": workspace.PathToURI(old)}}); err != nil {
			return err
		}
	}
	for _, o := range opened {
		err := c.Notify(ctx, "textDocument/didOpen", map[string]any{"textDocument": map[string]any{
			"uri": workspace.PathToURI(o.path), "languageId": languageID(o.path), "version": o.version, "text": o.text}})
		if err != nil {
			return err
		}
	}
	return nil
}

func (c *Client) applyTextEdit(ctx context.Context, te TextDocumentEdit, save bool) error {
	path, err := workspace.URIToPath(te.TextDocument.URI)
	if err != nil {
		return err
	}
	c.mu.Lock()
	d, open := c.docs[path]
	c.mu.Unlock()
	var text string
	if open {
		if te.TextDocument.Version != nil && *te.TextDocument.Version != d.version {
			return fmt.Errorf("version %d, buffer has %d", *te.TextDocument.Version, d.version)
		}
		text = d.text
	} else {
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		text = string(b)
	}
	disk, _ := os.ReadFile(path)
	wasClean := string(disk) == text
	// Apply from the end so earlier offsets stay valid; edits must not overlap.
	type rep struct {
		start, end int
		text       string
		rng        workspace.Range
	}
	var reps []rep
	for _, e := range te.Edits {
		s, err1 := utf16Offset(text, e.Range.Start)
		en, err2 := utf16Offset(text, e.Range.End)
		if err1 != nil || err2 != nil {
			return fmt.Errorf("bad range %+v", e.Range)
		}
		reps = append(reps, rep{s, en, e.NewText, e.Range})
	}
	sort.SliceStable(reps, func(i, j int) bool { return reps[i].start > reps[j].start })
	// The didChange is incremental, as editors send it: the edits from the
	// last, so that each range still holds in the text before it.
	changes := make([]any, 0, len(reps))
	for _, r := range reps {
		text = text[:r.start] + r.text + text[r.end:]
		changes = append(changes, map[string]any{"range": r.rng, "text": r.text})
	}
	if !open {
		// Editors open a file they edit; this one writes it when saving.
		if err := c.OpenDoc(ctx, path, text); err != nil {
			return err
		}
	} else {
		c.mu.Lock()
		d.text = text
		d.version++
		v := d.version
		c.mu.Unlock()
		err := c.Notify(ctx, "textDocument/didChange", map[string]any{
			"textDocument":   map[string]any{"uri": te.TextDocument.URI, "version": v},
			"contentChanges": changes,
		})
		if err != nil {
			return err
		}
	}
	if save && wasClean {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			return err
		}
		return c.Notify(ctx, "textDocument/didSave", map[string]any{"textDocument": map[string]any{"uri": te.TextDocument.URI}})
	}
	return nil
}

// utf16Offset converts an LSP position to a byte offset, written apart from
// the server's own conversion so tests check one against the other.
func utf16Offset(text string, p workspace.Position) (int, error) {
	off := 0
	for i := uint32(0); i < p.Line; i++ {
		k := strings.IndexByte(text[off:], '\n')
		if k < 0 {
			if i == p.Line-1 && p.Character == 0 {
				return len(text), nil // just past the last line
			}
			return 0, fmt.Errorf("line %d out of range", p.Line)
		}
		off += k + 1
	}
	line := text[off:]
	if k := strings.IndexByte(line, '\n'); k >= 0 {
		line = line[:k+1]
	}
	line = strings.TrimRight(line, "\r\n")
	units := utf16.Encode([]rune(line))
	if int(p.Character) > len(units) {
		return 0, fmt.Errorf("character %d past the line end", p.Character)
	}
	return off + len(string(utf16.Decode(units[:p.Character]))), nil
}
