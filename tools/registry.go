package tools

import (
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
)

// Registry holds the tools by name. It is safe for concurrent use.
type Registry struct {
	log *slog.Logger

	mu      sync.RWMutex
	tools   map[string]*Tool
	aliases map[string]string // alias -> name
}

// NewRegistry returns an empty registry that logs to log (nil: discard).
func NewRegistry(log *slog.Logger) *Registry {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Registry{log: log, tools: map[string]*Tool{}, aliases: map[string]string{}}
}

// ErrDuplicate is the error of Register for a name already registered.
var ErrDuplicate = errors.New("a tool of that name is already registered")

// Register compiles the tool's schema and adds it. A name already
// registered is refused with ErrDuplicate: Replace replaces on purpose.
func (r *Registry) Register(def *Tool) error { return r.add(def, false) }

// Replace is Register that replaces a tool of the same name, aliases
// included, and logs it.
func (r *Registry) Replace(def *Tool) error { return r.add(def, true) }

func (r *Registry) add(def *Tool, replace bool) error {
	t := *def // the registry owns its copy, so one definition can serve many registries
	if err := t.compile(); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	old, exists := r.tools[t.Name]
	if exists && !replace {
		return fmt.Errorf("tool %s: %w", t.Name, ErrDuplicate)
	}
	for _, a := range t.Aliases {
		if _, ok := r.tools[a]; ok {
			return fmt.Errorf("tool %s: alias %s is the name of another tool", t.Name, a)
		}
		if n, ok := r.aliases[a]; ok && n != t.Name {
			return fmt.Errorf("tool %s: alias %s belongs to %s", t.Name, a, n)
		}
	}
	if exists {
		r.log.Info("tool replaced", "tool", t.Name)
		r.dropAliases(old)
	}
	r.tools[t.Name] = &t
	for _, a := range t.Aliases {
		r.aliases[a] = t.Name
	}
	return nil
}

// Unregister removes the tool name (not an alias) and its aliases, and
// reports whether it was there.
func (r *Registry) Unregister(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.tools[name]
	if ok {
		r.dropAliases(t)
		delete(r.tools, name)
	}
	return ok
}

func (r *Registry) dropAliases(t *Tool) {
	for _, a := range t.Aliases {
		if r.aliases[a] == t.Name {
			delete(r.aliases, a)
		}
	}
}

// Has reports whether name is a tool's name or alias.
func (r *Registry) Has(name string) bool {
	_, ok := r.Lookup(name)
	return ok
}

// MustRegister registers built-in tools, whose definitions are known good.
func (r *Registry) MustRegister(ts ...*Tool) {
	for _, t := range ts {
		if err := r.Register(t); err != nil {
			panic(err)
		}
	}
}

// Lookup finds a tool by name or alias.
func (r *Registry) Lookup(name string) (*Tool, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if t, ok := r.tools[name]; ok {
		return t, true
	}
	if n, ok := r.aliases[name]; ok {
		return r.tools[n], true
	}
	return nil, false
}

// List returns the tools sorted by name. allow, when not nil, keeps only
// the tools it admits.
func (r *Registry) List(allow func(name string) bool) []*Tool {
	r.mu.RLock()
	out := make([]*Tool, 0, len(r.tools))
	for _, t := range r.tools {
		if allow == nil || allow(t.Name) {
			out = append(out, t)
		}
	}
	r.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
