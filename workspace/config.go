package workspace

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/agentls/agentls/internal/schema"
)

// ConfigSchema is the JSON Schema of the configuration, shipped so editors
// can offer completion for .agentls.json.
//
//go:embed config.schema.json
var ConfigSchema []byte

// configSchema is compiled when a layer is first validated, not at start-up.
var configSchema = sync.OnceValue(func() *schema.Schema { return schema.MustCompile(ConfigSchema) })

// Config is the merged configuration. Its zero value is not useful: start
// from DefaultConfig.
type Config struct {
	Approval ApprovalConfig    `json:"approval"`
	Tools    ToolsConfig       `json:"tools"`
	Agents   map[string]Agent  `json:"agents,omitempty"`
	Paths    PathsConfig       `json:"paths"`
	Shell    ShellConfig       `json:"shell"`
	RunCode  RunCodeConfig     `json:"runCode"`
	Web      WebConfig         `json:"web"`
	Custom   []CustomTool      `json:"custom,omitempty"`
	Limits   Limits            `json:"limits"`
	LSP      LSPConfig         `json:"lsp"`
	History  HistoryConfig     `json:"history"`
	Search   SearchIndexConfig `json:"search"`
}

// ApprovalConfig is the "approval" key.
type ApprovalConfig struct {
	Mode           string            `json:"mode"`
	Tools          map[string]string `json:"tools,omitempty"`
	TimeoutSeconds int               `json:"timeoutSeconds"`
	PersistAlways  bool              `json:"persistAlways"`
}

// ToolsConfig is the "tools" key.
type ToolsConfig struct {
	Enabled        ToolList `json:"enabled"`
	TimeoutSeconds int      `json:"timeoutSeconds"`
	// ResultCache: a session answers a repeated read from the answers it
	// kept (the result cache of docs/protocol.md; default true).
	ResultCache bool `json:"resultCache"`
}

// Agent names the tools one agent may call.
type Agent struct {
	Tools ToolList `json:"tools"`
}

// ToolList is either "all" (All) or a list of tool names.
type ToolList struct {
	All   bool
	Names []string
}

// Allows reports whether the list admits the tool.
func (l ToolList) Allows(name string) bool {
	if l.All {
		return true
	}
	for _, n := range l.Names {
		if n == name {
			return true
		}
	}
	return false
}

// UnmarshalJSON accepts "all" or an array of names.
func (l *ToolList) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		if s != "all" {
			return fmt.Errorf(`tool list must be "all" or an array, not %q`, s)
		}
		*l = ToolList{All: true}
		return nil
	}
	var names []string
	if err := json.Unmarshal(b, &names); err != nil {
		return err
	}
	*l = ToolList{Names: names}
	return nil
}

// MarshalJSON writes "all" or the array.
func (l ToolList) MarshalJSON() ([]byte, error) {
	if l.All {
		return []byte(`"all"`), nil
	}
	if l.Names == nil {
		return []byte("[]"), nil
	}
	return json.Marshal(l.Names)
}

// PathsConfig is the "paths" key.
type PathsConfig struct {
	Allow     []string `json:"allow,omitempty"`
	Sensitive []string `json:"sensitive"`
}

// ShellConfig is the "shell" key.
type ShellConfig struct {
	Allow          []string `json:"allow,omitempty"`
	Deny           []string `json:"deny,omitempty"`
	TimeoutSeconds int      `json:"timeoutSeconds"`
	MaxOutputBytes int      `json:"maxOutputBytes"`
	SecretEnv      []string `json:"secretEnv,omitempty"`
	// AllowNetwork are command prefixes (like Allow) whose automatic runs
	// keep the network inside the sandbox: a command has the network when
	// every part of it matches one.
	AllowNetwork []string `json:"allowNetwork,omitempty"`
	// SandboxAuto runs commands that run without a person (allow-listed,
	// or automatic by a rule or mode) in the sandbox of run_code (default
	// true). Only the user config may turn it off.
	SandboxAuto bool `json:"sandboxAuto"`
}

// RunCodeConfig is the "runCode" key.
type RunCodeConfig struct {
	// Sandbox is "bwrap" (default: run_code runs only in bubblewrap and
	// refuses without it) or "none" (run without the sandbox, under the
	// resource limits only). Only the user config may say "none".
	Sandbox string `json:"sandbox,omitempty"`
}

// WebConfig is the "web" key.
type WebConfig struct {
	Allow        []string     `json:"allow,omitempty"`
	AllowPrivate bool         `json:"allowPrivate"`
	Search       SearchConfig `json:"search"`
}

// SearchConfig configures the web_search provider.
type SearchConfig struct {
	Provider string `json:"provider,omitempty"`
	URL      string `json:"url,omitempty"`
	APIKey   string `json:"apiKey,omitempty"`
}

// CustomTool is a user-defined tool that runs argv without a shell.
type CustomTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema,omitempty"`
	Argv        []string        `json:"argv"`
	Approval    string          `json:"approval,omitempty"`
}

// Limits caps what tools read and return.
type Limits struct {
	ReadLines      int `json:"readLines"`
	MaxLineLength  int `json:"maxLineLength"`
	MaxFileBytes   int `json:"maxFileBytes"`
	GrepMaxResults int `json:"grepMaxResults"`
	MaxOutputBytes int `json:"maxOutputBytes"`
}

// LSPConfig is the "lsp" key.
type LSPConfig struct {
	Features []string `json:"features,omitempty"`
	// PublishSession, unless false, lets `agentls mcp` attach to an
	// editor's session (package attach); read when the session starts.
	PublishSession *bool `json:"publishSession,omitempty"`
}

// SearchIndexConfig is the "search" key: the grep tool's index.
type SearchIndexConfig struct {
	// Persist, unless false, keeps an on-disk copy of each root's index
	// in $XDG_CACHE_HOME/agentls so that a restart reads only the files
	// changed since (search/persist.go).
	Persist *bool `json:"persist,omitempty"`
}

// HistoryConfig is the "history" key.
type HistoryConfig struct {
	Enabled bool   `json:"enabled"`
	File    string `json:"file,omitempty"`
}

// DefaultSensitive are the globs no tool may touch unless the config says
// otherwise. Git's configuration files can hold credentials (tokens in
// remote URLs, http.extraHeader), and so can a credential store.
var DefaultSensitive = []string{".env", ".env.*", "**/.ssh/**", "**/.aws/**", "**/credentials.json", "**/*.pem", "**/id_rsa*",
	"**/.git/**/config", "**/.git/**/config.worktree", "**/.git-credentials"}

// DefaultConfig returns the configuration in force when nothing is set.
func DefaultConfig() *Config {
	return &Config{
		Approval: ApprovalConfig{Mode: "safe", TimeoutSeconds: 300},
		Tools:    ToolsConfig{Enabled: ToolList{All: true}, TimeoutSeconds: 600, ResultCache: true},
		Paths:    PathsConfig{Sensitive: append([]string(nil), DefaultSensitive...)},
		Shell:    ShellConfig{TimeoutSeconds: 120, MaxOutputBytes: DefaultOutputBytes, SandboxAuto: true},
		Limits: Limits{
			ReadLines: 2000, MaxLineLength: 2000, MaxFileBytes: 10 << 20,
			GrepMaxResults: 1000, MaxOutputBytes: DefaultOutputBytes,
		},
		History: HistoryConfig{Enabled: true},
	}
}

// ConfigFileName is the name of the configuration file at a root.
const ConfigFileName = ".agentls.json"

// Layer names a source of configuration, lowest precedence first.
type Layer int

// The layers, in the order they are merged (a later layer wins).
const (
	LayerUser      Layer = iota // $XDG_CONFIG_HOME/agentls/config.json
	LayerWorkspace              // .agentls.json at each root
	LayerInit                   // initializationOptions.config
	LayerSettings               // workspace/didChangeConfiguration settings.agentls
	numLayers
)

func (l Layer) String() string {
	return [...]string{"user config", ".agentls.json", "initializationOptions.config", "settings.agentls"}[l]
}

// ConfigError is an invalid layer. The layer's last valid value stays in force.
type ConfigError struct {
	Layer      Layer
	Source     string
	Violations []schema.Violation
	Err        error
}

func (e *ConfigError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "invalid %s", e.Layer)
	if e.Source != "" {
		fmt.Fprintf(&b, " (%s)", e.Source)
	}
	if e.Err != nil {
		fmt.Fprintf(&b, ": %v", e.Err)
	}
	for _, v := range e.Violations {
		fmt.Fprintf(&b, "; %s", v)
	}
	return b.String()
}

// ConfigStack merges the layers. Each layer is validated on its own when it
// is set; an invalid one is refused and the previous value of that layer
// stays.
type ConfigStack struct {
	// UserFile replaces the user config path (the --config flag) when set.
	UserFile string

	mu     sync.Mutex
	layers [numLayers]map[string]any
}

// Set replaces one layer with raw JSON (nil or empty clears it) and returns
// the newly merged configuration. source names the file or message for errors.
func (s *ConfigStack) Set(l Layer, source string, raw []byte) (*Config, error) {
	var m map[string]any
	if len(strings.TrimSpace(string(raw))) > 0 && string(raw) != "null" {
		v, err := schema.Decode(raw)
		if err != nil {
			return s.Merged(), &ConfigError{Layer: l, Source: source, Err: err}
		}
		if vs := configSchema().Validate(v); vs != nil {
			return s.Merged(), &ConfigError{Layer: l, Source: source, Violations: vs}
		}
		m, _ = v.(map[string]any)
	}
	s.mu.Lock()
	s.layers[l] = m
	s.mu.Unlock()
	return s.Merged(), nil
}

// DefaultOutputBytes is how much of a command's output, a diff, a page or
// grep's content a result holds by default (shell.maxOutputBytes,
// limits.maxOutputBytes): about 30,000 characters, a head and a tail, the
// rest readable by range (shell_output) or by narrowing the call.
const DefaultOutputBytes = 30000

// modeStrictness orders approval modes, strictest highest.
var modeStrictness = map[string]int{"yolo": 0, "none": 0, "safe": 1, "ask": 2, "all": 2}

// restrictWorkspace removes from a workspace layer (a file that comes with
// the repository, which anybody can write) every setting that would loosen
// approvals or confinement, and returns their names. A repository may make
// agentls stricter, never laxer: its mode counts only when at least as
// strict as the user's, its rules may say ask or deny but not auto, and its
// sensitive patterns add to the inherited ones instead of replacing them.
func (s *ConfigStack) restrictWorkspace(ws map[string]any) []string {
	var dropped []string
	drop := func(obj map[string]any, key, name string) {
		if _, ok := obj[key]; ok {
			delete(obj, key)
			dropped = append(dropped, name)
		}
	}
	s.mu.Lock()
	user := map[string]any{}
	merge(user, s.layers[LayerUser])
	s.mu.Unlock()
	userMode := "safe"
	if a, ok := user["approval"].(map[string]any); ok {
		if m, ok := a["mode"].(string); ok {
			userMode = m
		}
	}
	if a, ok := ws["approval"].(map[string]any); ok {
		if m, ok := a["mode"].(string); ok && modeStrictness[m] < modeStrictness[userMode] {
			drop(a, "mode", "approval.mode "+m)
		}
		if rules, ok := a["tools"].(map[string]any); ok {
			for _, name := range Names(rules) {
				if rules[name] == "auto" {
					drop(rules, name, "approval.tools."+name+" auto")
				}
			}
		}
		drop(a, "persistAlways", "approval.persistAlways")
	}
	if sh, ok := ws["shell"].(map[string]any); ok {
		drop(sh, "allow", "shell.allow")
		drop(sh, "allowNetwork", "shell.allowNetwork")
		drop(sh, "sandboxAuto", "shell.sandboxAuto")
	}
	if rc, ok := ws["runCode"].(map[string]any); ok {
		drop(rc, "sandbox", "runCode.sandbox")
	}
	if w, ok := ws["web"].(map[string]any); ok {
		drop(w, "allow", "web.allow")
		drop(w, "allowPrivate", "web.allowPrivate")
		drop(w, "search", "web.search") // it could send the user's API key to the repository's server
	}
	if p, ok := ws["paths"].(map[string]any); ok {
		drop(p, "allow", "paths.allow")
		if extra, ok := p["sensitive"].([]any); ok {
			base := []any{}
			if up, ok := user["paths"].(map[string]any); ok {
				if l, ok := up["sensitive"].([]any); ok {
					base = append(base, l...)
				}
			}
			if len(base) == 0 {
				for _, d := range DefaultSensitive {
					base = append(base, d)
				}
			}
			p["sensitive"] = append(base, extra...)
		}
	}
	if h, ok := ws["history"].(map[string]any); ok {
		drop(h, "file", "history.file")
	}
	if l, ok := ws["lsp"].(map[string]any); ok && l["publishSession"] == true {
		// publishing lets other programs of the user attach to the session
		drop(l, "publishSession", "lsp.publishSession true")
	}
	if cs, ok := ws["custom"].([]any); ok {
		for _, c := range cs {
			if m, ok := c.(map[string]any); ok && m["approval"] == "auto" {
				drop(m, "approval", fmt.Sprintf("custom %v approval auto", m["name"]))
			}
		}
	}
	return dropped
}

// userOnly are the settings ("object.key") that only the user config may
// set, because they turn a sandbox off: in any other layer (a repository's
// .agentls.json, and also the editor's settings, which may come from a
// workspace settings file of the repository) they are ignored.
var userOnly = [][2]string{{"shell", "sandboxAuto"}, {"runCode", "sandbox"}}

// withoutUserOnly returns m without the userOnly settings, copying only the
// objects it changes.
func withoutUserOnly(m map[string]any) map[string]any {
	out, copied := m, false
	for _, k := range userOnly {
		obj, ok := out[k[0]].(map[string]any)
		if !ok {
			continue
		}
		if _, ok := obj[k[1]]; !ok {
			continue
		}
		if !copied {
			out, copied = make(map[string]any, len(m)), true
			for kk, v := range m {
				out[kk] = v
			}
		}
		cp := make(map[string]any, len(obj))
		for kk, v := range obj {
			if kk != k[1] {
				cp[kk] = v
			}
		}
		out[k[0]] = cp
	}
	return out
}

// Merged returns the configuration of all layers over the defaults.
func (s *ConfigStack) Merged() *Config {
	s.mu.Lock()
	merged := map[string]any{}
	for l, m := range s.layers {
		if Layer(l) != LayerUser {
			m = withoutUserOnly(m)
		}
		merge(merged, m)
	}
	s.mu.Unlock()
	cfg := DefaultConfig()
	b, _ := json.Marshal(merged)
	if err := json.Unmarshal(b, cfg); err != nil {
		// Every layer passed the schema, so this is a bug in the Config type.
		panic(fmt.Sprintf("merged config does not decode: %v", err))
	}
	if m, ok := modeAliases[cfg.Approval.Mode]; ok {
		cfg.Approval.Mode = m
	}
	return cfg
}

// modeAliases are the approval mode names of other tool systems: none (no
// approval) is yolo, all (approve everything) is ask.
var modeAliases = map[string]string{"none": "yolo", "all": "ask"}

// merge copies src over dst: objects merge key by key, anything else replaces.
func merge(dst, src map[string]any) {
	for k, v := range src {
		if sm, ok := v.(map[string]any); ok {
			if dm, ok := dst[k].(map[string]any); ok {
				merge(dm, sm)
				continue
			}
			cp := map[string]any{}
			merge(cp, sm)
			dst[k] = cp
			continue
		}
		dst[k] = v
	}
}

// UserConfigPath is $XDG_CONFIG_HOME/agentls/config.json (or the OS default).
func UserConfigPath() string {
	dir := os.Getenv("XDG_CONFIG_HOME")
	if dir == "" {
		d, err := os.UserConfigDir()
		if err != nil {
			return ""
		}
		dir = d
	}
	return filepath.Join(dir, "agentls", "config.json")
}

// LoadFiles sets the user layer and the workspace layer from disk. The
// workspace layer merges the .agentls.json of every root, the first root
// last so that it wins. Missing files are not errors: a file deleted since
// the last load takes its settings with it. A file that cannot be read or
// is not valid keeps the settings last read from it, and is reported.
func (s *ConfigStack) LoadFiles(roots []string) (*Config, []error) {
	var errs []error
	p := s.UserFile
	if p == "" {
		p = UserConfigPath()
	}
	if p != "" {
		if b, err := os.ReadFile(p); err == nil {
			if _, err := s.Set(LayerUser, p, b); err != nil {
				errs = append(errs, err)
			}
		} else if os.IsNotExist(err) {
			s.Set(LayerUser, p, nil) // deleted: its settings go with it
		} else {
			errs = append(errs, &ConfigError{Layer: LayerUser, Source: p, Err: err})
		}
	}
	ws := map[string]any{}
	for i := len(roots) - 1; i >= 0; i-- {
		p := filepath.Join(roots[i], ConfigFileName)
		b, err := os.ReadFile(p)
		if err != nil {
			if !os.IsNotExist(err) {
				errs = append(errs, &ConfigError{Layer: LayerWorkspace, Source: p, Err: err})
			}
			continue
		}
		v, err := schema.Decode(b)
		if err != nil {
			errs = append(errs, &ConfigError{Layer: LayerWorkspace, Source: p, Err: err})
			continue
		}
		if vs := configSchema().Validate(v); vs != nil {
			errs = append(errs, &ConfigError{Layer: LayerWorkspace, Source: p, Violations: vs})
			continue
		}
		m, _ := v.(map[string]any)
		merge(ws, m)
	}
	if dropped := s.restrictWorkspace(ws); len(dropped) > 0 {
		errs = append(errs, &ConfigError{Layer: LayerWorkspace, Source: ".agentls.json",
			Err: fmt.Errorf("ignored settings that would loosen approvals (set them in your user config instead): %s", strings.Join(dropped, ", "))})
	}
	b, _ := json.Marshal(ws)
	if len(ws) == 0 {
		b = nil
	}
	cfg, err := s.Set(LayerWorkspace, ".agentls.json", b)
	if err != nil {
		errs = append(errs, err)
	}
	return cfg, errs
}

// Names returns the sorted keys of m (nil when it is empty), for stable
// output.
func Names[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
