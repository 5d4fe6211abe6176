package tools

import (
	"slices"
	"strings"
)

// builtins are the built-in tools: each tool's file defines its tool with
// builtin, which adds it here.
var builtins []*Tool

// builtin defines a built-in tool (Define) and adds it to Builtins.
func builtin[A any](d Def[A]) *Tool {
	t := Define(d)
	builtins = append(builtins, t)
	return t
}

// Builtins returns the built-in tools, ready to register, sorted by name.
func Builtins() []*Tool {
	ts := slices.Clone(builtins)
	slices.SortFunc(ts, func(a, b *Tool) int { return strings.Compare(a.Name, b.Name) })
	return ts
}

// NewBuiltinRegistry returns a registry of the built-in tools.
func NewBuiltinRegistry() *Registry {
	r := NewRegistry(nil)
	r.MustRegister(Builtins()...)
	return r
}
