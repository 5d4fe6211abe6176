package tools

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/agentls/agentls/approval"
	"github.com/agentls/agentls/process"
	"github.com/agentls/agentls/workspace"
)

// placeholder is {{name}} in a custom tool's argv.
var placeholder = regexp.MustCompile(`\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}`)

// customTool makes a tool of a configured command (a "custom" entry of
// the configuration; docs/protocol.md, Beyond the contract). Its argv is a
// template: {{name}} is replaced by the argument name; an element that is
// only {{name}} takes an array argument as several elements and disappears
// when the argument is absent. No shell is ever involved, and an argument
// value starting with "-" is refused, so that no value can turn into an
// option of the command.
func customTool(ct workspace.CustomTool) (*Tool, error) {
	schema := ct.InputSchema
	if len(schema) == 0 {
		schema = json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{}}`)
	}
	approvalKind := "ask"
	if ct.Approval == "auto" {
		approvalKind = "auto"
	}
	argv := append([]string(nil), ct.Argv...)
	t := Define(Def[map[string]any]{
		Spec: Spec{
			Name: ct.Name, Category: "custom", Title: ct.Name,
			Description: ct.Description + fmt.Sprintf(" (runs: %s)", strings.Join(argv, " ")),
			InputSchema: schema,
			Annotations: Annotations{Approval: approvalKind},
			Risk:        approval.RiskExecute,
			Timeout:     maxShellTimeout + time.Minute,
		},
		// The command is built (and its arguments checked) before anyone
		// is asked: a call it refuses never reaches the person.
		Validate: func(args map[string]any) error {
			_, err := expandArgv(argv, args)
			return err
		},
		Execute: func(c *Call, args map[string]any) (*Result, error) {
			cmd, err := expandArgv(argv, args)
			if err != nil {
				return nil, err
			}
			cfg := c.Workspace.Config()
			return foreground(c, process.Spec{Argv: cmd, Dir: c.Workspace.Root(), Env: shellEnv(c, c.Workspace.Root(), nil), Command: strings.Join(cmd, " ")},
				shellTimeout(cfg, 0), nil)
		},
	})
	if err := t.compile(); err != nil {
		return nil, err
	}
	if err := t.checkSchemas(); err != nil { // a user's schema is checked when the config is read
		return nil, err
	}
	return t, nil
}

// expandArgv fills a custom tool's argv template with arguments.
func expandArgv(tmpl []string, args map[string]any) ([]string, error) {
	var out []string
	str := func(name string, v any) (string, error) {
		var s string
		switch x := v.(type) {
		case string:
			s = x
		case float64, bool:
			s = fmt.Sprint(x)
		default:
			return "", Errorf(InvalidParams, "argument %s must be a string, number or boolean here", name)
		}
		if strings.HasPrefix(s, "-") {
			return "", Errorf(InvalidParams, "argument %s may not start with \"-\" (it would become an option)", name)
		}
		return s, nil
	}
	for _, el := range tmpl {
		if m := placeholder.FindStringSubmatch(el); m != nil && m[0] == el {
			v, ok := args[m[1]]
			if !ok || v == nil {
				continue
			}
			vals, ok := v.([]any) // an array: one element of argv each
			if !ok {
				vals = []any{v}
			}
			for _, e := range vals {
				s, err := str(m[1], e)
				if err != nil {
					return nil, err
				}
				out = append(out, s)
			}
			continue
		}
		var ferr error
		el = placeholder.ReplaceAllStringFunc(el, func(p string) string {
			name := placeholder.FindStringSubmatch(p)[1]
			v, ok := args[name]
			if !ok || v == nil {
				return ""
			}
			s, err := str(name, v)
			if err != nil && ferr == nil {
				ferr = err
			}
			return s
		})
		if ferr != nil {
			return nil, ferr
		}
		out = append(out, el)
	}
	if len(out) == 0 {
		return nil, Errorf(InvalidParams, "the command is empty")
	}
	return out, nil
}

// customSet is the registry of one configuration's custom tools.
type customSet struct {
	cfg *workspace.Config
	reg *Registry
}

// custom returns the registry of cfg's custom tools, built once per
// configuration (a Config is never modified once in force). A custom tool
// named like a built-in one is ignored, and logged.
func (r *Runner) custom(cfg *workspace.Config) *Registry {
	if cs := r.customs.Load(); cs != nil && cs.cfg == cfg {
		return cs.reg
	}
	reg := NewRegistry(r.Log)
	for _, ct := range cfg.Custom {
		if _, builtin := r.Registry.Lookup(ct.Name); builtin {
			r.Log.Warn("custom tool ignored: a built-in tool has its name", "tool", ct.Name)
			continue
		}
		t, err := customTool(ct)
		if err == nil {
			err = reg.Register(t)
		}
		if err != nil {
			r.Log.Warn("custom tool ignored", "tool", ct.Name, "err", err)
		}
	}
	r.customs.Store(&customSet{cfg: cfg, reg: reg})
	return reg
}

// lookup finds a built-in tool, then a custom one of cfg.
func (r *Runner) lookup(cfg *workspace.Config, name string) (*Tool, bool) {
	if t, ok := r.Registry.Lookup(name); ok {
		return t, true
	}
	return r.custom(cfg).Lookup(name)
}
