package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentls/agentls/workspace"
)

func simpleTool(name string, aliases ...string) *Tool {
	return Define(Def[json.RawMessage]{Spec: Spec{
		Name: name, Description: name, Aliases: aliases,
		Annotations: Annotations{ReadOnly: true, Approval: "auto"},
	},
		Execute: func(c *Call, _ json.RawMessage) (*Result, error) { return Success(name, nil), nil }})
}

func TestRegistry(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	r := NewRegistry(slog.New(slog.NewTextHandler(&logs, nil)))
	r.MustRegister(simpleTool("b", "bee"), simpleTool("a"), simpleTool("c"))
	if t1, ok := r.Lookup("bee"); !ok || t1.Name != "b" {
		t.Errorf("alias lookup: %v %v", t1, ok)
	}
	if _, ok := r.Lookup("zzz"); ok {
		t.Error("unknown name found")
	}
	var names []string
	for _, tl := range r.List(nil) {
		names = append(names, tl.Name)
	}
	if strings.Join(names, ",") != "a,b,c" {
		t.Errorf("list order = %v", names)
	}
	names = names[:0]
	for _, tl := range r.List(func(n string) bool { return n != "b" }) {
		names = append(names, tl.Name)
	}
	if strings.Join(names, ",") != "a,c" {
		t.Errorf("filtered = %v", names)
	}
	// Registering a name again is refused; Replace replaces the tool and
	// its aliases, and says so; Unregister removes it.
	if err := r.Register(simpleTool("b", "bb")); !errors.Is(err, ErrDuplicate) {
		t.Errorf("a second b: %v, want ErrDuplicate", err)
	}
	if !r.Has("bee") || r.Has("bb") {
		t.Error("a refused registration changed the registry")
	}
	if err := r.Replace(simpleTool("b", "bb")); err != nil {
		t.Fatal(err)
	}
	if _, ok := r.Lookup("bee"); ok {
		t.Error("old alias survived replacement")
	}
	if _, ok := r.Lookup("bb"); !ok {
		t.Error("new alias missing")
	}
	if !strings.Contains(logs.String(), "tool replaced") {
		t.Errorf("replacement not logged: %q", logs.String())
	}
	if !r.Unregister("b") || r.Has("b") || r.Has("bb") || r.Unregister("b") {
		t.Error("Unregister did not remove b and its alias once")
	}
	ok := func(c *Call, _ json.RawMessage) (*Result, error) { return Success("x", nil), nil }
	bad := []*Tool{
		Define(Def[json.RawMessage]{Spec: Spec{Name: "", Annotations: Annotations{Approval: "auto"}}, Execute: ok}),
		Define(Def[json.RawMessage]{Spec: Spec{Name: "x", Annotations: Annotations{Approval: "auto"}}}),
		Define(Def[json.RawMessage]{Spec: Spec{Name: "x", Annotations: Annotations{Approval: "maybe"}}, Execute: ok}),
		Define(Def[json.RawMessage]{Spec: Spec{Name: "x", Annotations: Annotations{Approval: "auto"}, InputSchema: json.RawMessage(`{"type": `)}, Execute: ok}),
		Define(Def[json.RawMessage]{Spec: Spec{Name: "x", Annotations: Annotations{Approval: "auto"}, Aliases: []string{"a"}}, Execute: ok}),
	}
	for i, b := range bad {
		if err := r.Register(b); err == nil {
			t.Errorf("bad tool %d registered", i)
		}
	}
}

func TestRegistryConcurrent(t *testing.T) {
	t.Parallel()
	r := NewRegistry(nil)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(2)
		go func() { defer wg.Done(); r.Replace(simpleTool("t", "tt")) }()
		go func() { defer wg.Done(); r.Lookup("tt"); r.List(nil) }()
	}
	wg.Wait()
	if _, ok := r.Lookup("tt"); !ok {
		t.Fatal("tool missing")
	}
}

func TestBuiltinSchemas(t *testing.T) {
	t.Parallel()
	for _, tl := range NewBuiltinRegistry().List(nil) {
		if err := tl.checkSchemas(); err != nil {
			t.Errorf("%s: %v", tl.Name, err)
		}
		var s map[string]any
		if err := json.Unmarshal(tl.InputSchema, &s); err != nil {
			t.Fatalf("%s: %v", tl.Name, err)
		}
		if s["type"] != "object" || s["additionalProperties"] != false {
			t.Errorf("%s: input schema must be an object with additionalProperties false", tl.Name)
		}
		if tl.Title == "" || len(tl.Description) < 20 {
			t.Errorf("%s: needs a title and a useful description", tl.Name)
		}
	}
}

func TestAllowedByConfig(t *testing.T) {
	t.Parallel()
	cfg := workspace.DefaultConfig()
	cfg.Tools.Enabled = workspace.ToolList{Names: []string{"read_file", "grep"}}
	cfg.Agents = map[string]workspace.Agent{"r": {Tools: workspace.ToolList{Names: []string{"read_file"}}}}
	tests := []struct {
		agent, tool string
		ok          bool
	}{
		{"", "read_file", true}, {"", "grep", true}, {"", "write_file", false},
		{"r", "read_file", true}, {"r", "grep", false}, {"unknown-agent", "grep", true},
	}
	for _, tt := range tests {
		if got := allowed(cfg, tt.agent, tt.tool) == ""; got != tt.ok {
			t.Errorf("allowed(%q, %q) = %v, want %v", tt.agent, tt.tool, got, tt.ok)
		}
	}
}

// TestArgsMatchSchema: every built-in tool's arguments type has a field
// for each property its input schema declares, and the schema a property
// for each field, in nested objects (and arrays of them) too: what the
// schema accepts is never dropped by the decoding, and no field waits for
// an argument the schema refuses.
func TestArgsMatchSchema(t *testing.T) {
	t.Parallel()
	for _, tool := range NewBuiltinRegistry().List(nil) {
		a, err := tool.fns.decode(json.RawMessage(`{}`))
		if err != nil {
			t.Errorf("%s: {} does not decode: %v", tool.Name, err)
			continue
		}
		var s map[string]any
		if err := json.Unmarshal(tool.InputSchema, &s); err != nil {
			t.Fatalf("%s: %v", tool.Name, err)
		}
		for _, m := range argsMismatch(tool.Name+" ", reflect.TypeOf(a), s) {
			t.Error(m)
		}
	}
}

// argsMismatch lists the properties of the object schema s that typ has no
// field for, and the fields it has no property for; at names the place.
func argsMismatch(at string, typ reflect.Type, s map[string]any) []string {
	switch typ.Kind() {
	case reflect.Pointer:
		return argsMismatch(at, typ.Elem(), s)
	case reflect.Slice, reflect.Array:
		if items, ok := s["items"].(map[string]any); ok {
			return argsMismatch(strings.TrimSuffix(at, ".")+"[].", typ.Elem(), items)
		}
		return nil
	case reflect.Struct:
	default:
		return nil
	}
	props, _ := s["properties"].(map[string]any)
	fields := jsonFields(typ)
	var out []string
	for name, p := range props {
		f, ok := fields[name]
		if !ok {
			out = append(out, fmt.Sprintf("%s%s: in the schema, no field of %s", at, name, typ))
			continue
		}
		if ps, ok := p.(map[string]any); ok {
			out = append(out, argsMismatch(at+name+".", f, ps)...)
		}
	}
	for name := range fields {
		if _, ok := props[name]; !ok {
			out = append(out, fmt.Sprintf("%s%s: a field of %s, not in the schema", at, name, typ))
		}
	}
	slices.Sort(out)
	return out
}

// jsonFields are the types of a struct's fields by the names encoding/json
// gives them, embedded structs' fields included.
func jsonFields(typ reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for _, f := range reflect.VisibleFields(typ) {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		t := f.Type
		if t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch {
		case !f.IsExported() || name == "-" || f.Anonymous && name == "" && t.Kind() == reflect.Struct:
			continue // an embedded struct's fields come after it
		case name == "":
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}
