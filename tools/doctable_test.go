package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

// The tool table of docs/protocol.md ("Tools") is generated from the
// built-in tools: TestProtocolToolTable fails when it differs, and
//
//	go test ./tools -run TestProtocolToolTable -update
//
// rewrites it between these two markers.
const (
	protocolDoc      = "../docs/protocol.md"
	toolTableBegin   = "<!-- BEGIN GENERATED TOOL TABLE: go test ./tools -run TestProtocolToolTable -update -->"
	toolTableEnd     = "<!-- END GENERATED TOOL TABLE -->"
	toolTableCommand = "go test ./tools -run TestProtocolToolTable -update"
)

// renderToolTable renders the tools, sorted by name, as a Markdown table:
// name and aliases, title, arguments (from the input schema, in its order),
// approval, risk and the first sentence of the description.
func renderToolTable(ts []*Tool) (string, error) {
	ts = slices.Clone(ts)
	slices.SortFunc(ts, func(a, b *Tool) int { return strings.Compare(a.Name, b.Name) })
	var b strings.Builder
	b.WriteString("| tool [aliases] | title | arguments | approval | risk | what it does |\n")
	b.WriteString("|---|---|---|---|---|---|\n")
	for _, t := range ts {
		args, err := schemaArguments(t.InputSchema)
		if err != nil {
			return "", fmt.Errorf("tool %s: %w", t.Name, err)
		}
		name := "`" + t.Name + "`"
		if len(t.Aliases) > 0 {
			name += " [" + strings.Join(t.Aliases, ", ") + "]"
		}
		risk := string(t.Risk)
		if risk == "" {
			risk = "—"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", name, cell(t.Title), cell(args),
			approvalCell(t.Annotations), risk, cell(firstSentence(t.Description)))
	}
	return b.String(), nil
}

// approvalCell is the tool's approval with the effects that qualify it.
func approvalCell(a Annotations) string {
	s := a.Approval
	var notes []string
	if a.ReadOnly {
		notes = append(notes, "read-only")
	}
	if a.Destructive {
		notes = append(notes, "destructive")
	}
	if a.Dangerous {
		notes = append(notes, "dangerous")
	}
	if len(notes) > 0 {
		s += " (" + strings.Join(notes, ", ") + ")"
	}
	return s
}

// cell escapes text for a Markdown table cell.
func cell(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	return strings.ReplaceAll(s, "|", `\|`)
}

// firstSentence is the description up to its first ". " (or all of it).
func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i+1]
	}
	return s
}

// schemaProperty is what the table shows of one property.
type schemaProperty struct {
	Type    any               `json:"type"`
	Enum    []any             `json:"enum"`
	Default json.RawMessage   `json:"default"`
	Items   *schemaProperties `json:"items"`
}

// schemaProperties is an object schema's properties in their written order.
type schemaProperties struct {
	Required   []string        `json:"required"`
	Properties json.RawMessage `json:"properties"`
}

// schemaArguments renders an object schema's properties, in the order the
// schema writes them: name, ? when optional, the allowed values of an enum,
// = the default, and the fields of an array's objects.
func schemaArguments(raw json.RawMessage) (string, error) {
	if len(raw) == 0 {
		return "—", nil
	}
	var s schemaProperties
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", err
	}
	out, err := s.render()
	if err != nil {
		return "", err
	}
	if out == "" {
		return "—", nil
	}
	return out, nil
}

func (s *schemaProperties) render() (string, error) {
	if len(s.Properties) == 0 {
		return "", nil
	}
	required := map[string]bool{}
	for _, r := range s.Required {
		required[r] = true
	}
	dec := json.NewDecoder(bytes.NewReader(s.Properties))
	if _, err := dec.Token(); err != nil { // {
		return "", err
	}
	var parts []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return "", err
		}
		name, _ := tok.(string)
		var p schemaProperty
		if err := dec.Decode(&p); err != nil {
			return "", fmt.Errorf("property %s: %w", name, err)
		}
		part := name
		if !required[name] {
			part += "?"
		}
		if len(p.Enum) > 0 {
			vals := make([]string, len(p.Enum))
			for i, v := range p.Enum {
				vals[i] = fmt.Sprint(v)
			}
			part += " " + strings.Join(vals, "|")
		}
		if p.Items != nil {
			inner, err := p.Items.render()
			if err != nil {
				return "", fmt.Errorf("property %s: %w", name, err)
			}
			if inner != "" {
				part += " [{" + inner + "}]"
			}
		}
		if len(p.Default) > 0 {
			part += " = " + string(p.Default)
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, ", "), nil
}

// TestProtocolToolTable: the tool table of docs/protocol.md is the
// registry's; -update rewrites it.
func TestProtocolToolTable(t *testing.T) {
	t.Parallel()
	table, err := renderToolTable(Builtins())
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(protocolDoc)
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	begin := strings.Index(text, toolTableBegin)
	end := strings.Index(text, toolTableEnd)
	if begin < 0 || end < begin {
		t.Fatalf("%s lacks the markers of the generated tool table:\n%s\n%s", protocolDoc, toolTableBegin, toolTableEnd)
	}
	head := text[:begin+len(toolTableBegin)] + "\n"
	got := text[len(head):end]
	if *update {
		if err := os.WriteFile(protocolDoc, []byte(head+table+text[end:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got != table {
		t.Errorf("the tool table of %s differs from the registry; regenerate it with\n\t%s\n--- in the file\n%s--- from the registry\n%s",
			protocolDoc, toolTableCommand, got, table)
	}
}

// TestSchemaArguments: the arguments column keeps the schema's order and
// shows optional fields, enums, defaults and the fields of array items.
func TestSchemaArguments(t *testing.T) {
	t.Parallel()
	tests := []struct{ schema, want string }{
		{``, "—"},
		{`{"type":"object","properties":{}}`, "—"},
		{`{"type":"object","required":["z"],"properties":{"z":{"type":"string"},"a":{"type":"integer","default":3}}}`, "z, a? = 3"},
		{`{"type":"object","properties":{"mode":{"enum":["x","y"],"default":"x"}}}`, `mode? x|y = "x"`},
		{`{"type":"object","required":["edits"],"properties":{"edits":{"type":"array","items":{"type":"object","required":["a"],"properties":{"a":{},"b":{"type":"boolean","default":false}}}}}}`,
			"edits [{a, b? = false}]"},
	}
	for _, tt := range tests {
		got, err := schemaArguments(json.RawMessage(tt.schema))
		if err != nil || got != tt.want {
			t.Errorf("schemaArguments(%s) = %q, %v; want %q", tt.schema, got, err, tt.want)
		}
	}
	if got := cell("a|b\nc"); got != `a\|b c` {
		t.Errorf("cell = %q", got)
	}
}
