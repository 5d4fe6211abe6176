package redact

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
)

// DocumentBudget is how many bytes of strings one JSON document may have
// scanned; strings past it are replaced by a cut marker rather than logged
// unread.
const DocumentBudget = 256 << 10

// JSON returns the document with its secrets redacted (see the package
// comment). A document that is not valid JSON is redacted as one string
// and returned as a JSON string.
func JSON(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return raw
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		b, _ := json.Marshal(String(string(raw)))
		return b
	}
	out, err := json.Marshal(Value(v))
	if err != nil { // cannot happen for a decoded document
		b, _ := json.Marshal(String(string(raw)))
		return b
	}
	return out
}

// Value redacts a decoded JSON value (maps, slices and strings of
// encoding/json) in place and returns it.
func Value(v any) any {
	w := walker{budget: DocumentBudget}
	return w.value(v)
}

type walker struct{ budget int }

func (w *walker) str(s string) string {
	if w.budget <= 0 {
		return cutMarker(len(s))
	}
	w.budget -= min(len(s), Cap)
	return String(s)
}

func (w *walker) value(v any) any {
	switch t := v.(type) {
	case map[string]any:
		// the budget is spent in the same order every time
		for _, k := range slices.Sorted(maps.Keys(t)) {
			e := t[k]
			if nk := w.str(k); nk != k { // a secret as a key (a header or variable name)
				delete(t, k)
				t[nk] = e
				k = nk
			}
			switch {
			case strings.EqualFold(k, "env"):
				if env, ok := e.(map[string]any); ok {
					t[k] = w.env(env)
					continue
				}
			case SecretKey(k):
				if _, isObj := e.(map[string]any); !isObj && e != nil {
					if s, ok := e.(string); !ok || s != "" {
						t[k] = "[REDACTED:secret-key]"
						continue
					}
				}
			}
			t[k] = w.value(e)
		}
		return t
	case []any:
		for i, e := range t {
			t[i] = w.value(e)
		}
		return t
	case string:
		if LooksSecret(t) {
			return "[REDACTED:high-entropy]"
		}
		return w.str(t)
	}
	return v
}

// env redacts the values of an "env" object: all of them but those of
// well-known variables that hold no secrets, which are still scanned.
func (w *walker) env(env map[string]any) map[string]any {
	for k, e := range env {
		s, ok := e.(string)
		if !ok {
			env[k] = w.value(e)
			continue
		}
		if PlainEnv(k) {
			env[k] = w.value(s)
			continue
		}
		env[k] = "[REDACTED:env]"
	}
	return env
}

// Variables whose values are not secrets and are worth reading in a log.
var plainEnv = map[string]bool{
	"PATH": true, "HOME": true, "USER": true, "SHELL": true, "TERM": true, "LANG": true, "LANGUAGE": true,
	"TZ": true, "PWD": true, "TMPDIR": true, "EDITOR": true, "PAGER": true, "NO_COLOR": true, "CLICOLOR": true,
	"FORCE_COLOR": true, "CI": true, "DEBUG": true, "VERBOSE": true, "LOG_LEVEL": true, "RUST_LOG": true,
	"RUST_BACKTRACE": true, "GOFLAGS": true, "GOOS": true, "GOARCH": true, "CGO_ENABLED": true,
	"GOPATH": true, "GOCACHE": true, "GOMODCACHE": true, "GOTOOLCHAIN": true, "GOEXPERIMENT": true,
	"GOMAXPROCS": true, "GODEBUG": true, "NODE_ENV": true, "NODE_OPTIONS": true, "PYTHONPATH": true,
	"PYTHONUNBUFFERED": true, "PYTHONDONTWRITEBYTECODE": true, "VIRTUAL_ENV": true, "JAVA_HOME": true,
	"CC": true, "CXX": true, "CFLAGS": true, "CXXFLAGS": true, "LDFLAGS": true, "MAKEFLAGS": true,
	"RUSTFLAGS": true, "CARGO_TARGET_DIR": true, "PORT": true, "HOST": true, "ENV": true, "APP_ENV": true,
}

// PlainEnv reports whether an environment variable is on the list of names
// whose values are logged (after String): PATH, HOME, LANG and LC_*, TZ,
// build and language settings (GOFLAGS, NODE_ENV, PYTHONPATH, CFLAGS, …).
// Every other variable's value is logged as "[REDACTED:env]": an env map
// is where an agent puts the credentials a command needs, and a log that
// names the variable says enough.
func PlainEnv(name string) bool {
	return plainEnv[name] || strings.HasPrefix(name, "LC_")
}

// SecretKey reports whether a JSON object key names a secret: SecretName,
// and also bare words that are secrets as keys of an argument object (key,
// private, auth), unless another word says the value is about a secret
// (key_id, auth_url).
func SecretKey(k string) bool {
	if SecretName(k) {
		return true
	}
	ws := words(k)
	found := false
	for _, w := range ws {
		if descriptorWords[w] {
			return false
		}
		found = found || w == "key" || w == "private" || w == "auth"
	}
	return found
}
