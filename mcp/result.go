package mcp

import (
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentls/agentls/tools"
)

// TextKey is the property of every success's structuredContent that holds
// the result's text (its content block), and of every outputSchema that
// describes it. Some clients show the model only structuredContent when
// there is one (Claude Code does), and a tool's text often says what its
// structured result leaves out (read_file's lines): with it, every tool's
// text reaches the model whichever part the client reads.
const TextKey = "text"

// callResult turns a ToolResult into the MCP result. A success is its
// content as text and its structured result, with the text as TextKey
// (withText), as structuredContent. Any other
// status is isError: the text says the code, the cause and what to do next
// (errorText), and holds the structured result, if any, as JSON (MCP
// clients check a structuredContent against the tool's outputSchema, which
// describes successes).
func callResult(res *tools.Result) *sdk.CallToolResult {
	if res.Status == tools.StatusSuccess {
		out := &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: res.Content}}}
		if res.Structured != nil {
			out.StructuredContent = withText(res.Structured, res.Content)
		}
		return out
	}
	return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: errorText(res)}}}
}

// withText is the structured result s with text added as TextKey. A result
// that is not a JSON object, or has its own TextKey, is left as it is
// (toolDef refuses an outputSchema with its own TextKey). A result that is
// JSON already (an attached session's) is not encoded again.
func withText(s any, text string) any {
	b, ok := s.(json.RawMessage)
	if !ok {
		var err error
		if b, err = json.Marshal(s); err != nil {
			return s
		}
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil || m == nil {
		return s
	}
	if _, ok := m[TextKey]; ok {
		return s
	}
	t, err := json.Marshal(text)
	if err != nil {
		return s
	}
	m[TextKey] = t
	return m
}

// errorText is what the model reads of a failed, rejected or cancelled
// call: `CODE: cause`, the details, the tool's own text, then `next:` what
// to do about it.
func errorText(res *tools.Result) string {
	e := res.Error
	if e == nil {
		code := tools.Internal
		switch res.Status {
		case tools.StatusRejected:
			code = tools.Rejected
		case tools.StatusCancelled:
			code = tools.Cancelled
		}
		e = &tools.Error{Code: code, Message: strings.TrimSpace(res.Content)}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n", e.Code, e.Message)
	if e.Details != nil {
		if d, err := json.Marshal(e.Details); err == nil {
			fmt.Fprintf(&b, "details: %s\n", d)
		}
	}
	if c := strings.TrimSpace(res.Content); c != "" && c != "error: "+e.Message && !strings.Contains(c, e.Message) {
		fmt.Fprintf(&b, "%s\n", c)
	}
	if res.Structured != nil {
		if s, err := json.Marshal(res.Structured); err == nil {
			fmt.Fprintf(&b, "result: %s\n", s)
		}
	}
	next := nextStep[e.Code]
	if next == "" {
		next = "read the cause above, fix it and try again."
	}
	if !e.Recoverable && e.Code != tools.Rejected && e.Code != tools.Cancelled && res.Status == tools.StatusError {
		next += " This error is not recoverable by retrying."
	}
	fmt.Fprintf(&b, "next: %s", next)
	return b.String()
}

// nextStep tells the model what to do after each error code.
var nextStep = map[tools.Code]string{
	tools.UnknownTool:      "list the tools (tools/list) and call one of those, with its exact name.",
	tools.InvalidParams:    "fix the arguments named in details (each violation has a JSON pointer and a reason) to match the tool's inputSchema, then call again.",
	tools.InvalidPath:      "use a path inside the workspace, relative to its root (get_current_directory lists the roots).",
	tools.SensitivePath:    "this path is protected by the configuration (paths.sensitive); do not try to reach it another way, ask the person if you need it.",
	tools.FileNotFound:     "check the path with list_directory or glob, then call again with an existing path.",
	tools.NotAFile:         "the path is a directory or a special file; use list_directory for directories.",
	tools.NotADirectory:    "the path is a file; use read_file for files.",
	tools.AlreadyExists:    "choose another path, or read the existing file and edit it.",
	tools.PermissionDenied: "the file system refused; ask the person to change the permissions, do not work around them.",
	tools.BinaryFile:       "the file is binary; do not read or edit it as text.",
	tools.TooLarge:         "read a part of it (offset and limit), or narrow the search.",
	tools.NoMatch:          "read the file again and copy old_string exactly as it is, whitespace included.",
	tools.AmbiguousMatch:   "add surrounding lines to old_string so that it matches once, or set replace_all.",
	tools.StaleFile:        "the file changed since you read it: read it again and redo the edit on its current content.",
	tools.PatchFailed:      "read the files again and make the patch against their current content.",
	tools.CommandBlocked:   "the configuration blocks this command: do not run it or a variant of it; tell the person what you wanted to do.",
	tools.Timeout:          "the call ran out of time: narrow it, or run a long command with shell_background.",
	tools.ExecutionError:   "read the output, fix the cause, then try again.",
	tools.NotConfigured:    "the feature is not configured here; tell the person what it needs.",
	tools.NetworkError:     "check the address, or try again later.",
	tools.Rejected:         "the call did not run. Do not retry it unchanged: follow the person's message, or tell the person what you need and why.",
	tools.Cancelled:        "the call was cancelled and whatever it started was stopped; do not retry unless asked.",
	tools.Internal:         "a fault inside agentls: tell the person; retrying may not help.",
	tools.NotAllowed:       "the configuration keeps this tool from you: do not retry it or reach it another way; use the tools tools/list gives you.",
	tools.NotAvailable:     "this session cannot serve the tool (a one-shot call keeps nothing after it returns): use shell_exec, narrowing or saving its output.",
	tools.NotApplied:       "the edit did not land as proposed: read the file again before editing it.",
	tools.UnsavedInEditor:  "the file has unsaved changes in the editor: ask the person to save or revert it, then try again.",
	SessionEnded:           "the editor this server was attached to closed the workspace: ask the person to open it again in an editor with agentls (the next call attaches to the new session by itself), then read the files again before you edit them.",
}
