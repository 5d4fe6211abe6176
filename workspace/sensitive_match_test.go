package workspace

import (
	"strings"
	"testing"
)

// TestGlobMatcher: the compiled globs answer as matchSensitive does, for
// the default globs and globs of every shape, in both cases, with and
// without case folding.
func TestGlobMatcher(t *testing.T) {
	t.Parallel()
	globSets := [][]string{
		DefaultSensitive,
		{"secrets/*.txt", "/config/prod.yaml", "**/a*/**", "{x,y}.key", "**/{x,y}.pem", "*.PEM", "**/[ab].txt", "build/**",
			"**/k?y", "**/*", "*", "**/id_*_rsa", "**/.Env/**", "**/tok*/**", "a/**/b", "**/", "**/x\\*y", "*[", "**/*secret*"},
		{"**/.ssh/**", ".env", "**/*.pem"},
		{"src/x", "a/*/x", "**/.git/**/config", "top/**/key.pem", "x/**", "**/src/**/x", "a/b/**", "y/x", "a/x/**", "**/b/x/**"},
	}
	segs := []string{".env", ".ENV", ".env.local", ".ssh", ".SSH", ".aws", "credentials.json", "Credentials.JSON", "key.pem", "KEY.PEM",
		"id_rsa", "id_rsa.pub", "ID_RSA", "a", "b", "x", "y", "x.key", "y.pem", "a.txt", "c.txt", "secrets", "config", "prod.yaml",
		"build", "key", "kay", "id_x_rsa", "tokens", "x*y", "my-secret-file", "src", "main.go", ".git", "pem", ".pem", "abc", "deep", "top"}
	var paths []string
	for _, a := range segs {
		paths = append(paths, a)
		for _, b := range segs {
			paths = append(paths, a+"/"+b)
		}
	}
	for _, a := range []string{"src", "a", ".ssh", "secrets", "build", ".git", "top"} {
		for _, b := range []string{"deep", "x"} {
			for _, c := range segs {
				paths = append(paths, a+"/"+b+"/"+c, "top/"+a+"/"+b+"/"+c)
			}
		}
	}
	paths = append(paths, "", "a/", "a//b", "/a")
	root := t.TempDir()
	w, err := New(root)
	if err != nil {
		t.Fatal(err)
	}
	matched := 0
	for _, globs := range globSets {
		cfg := *w.Config()
		cfg.Paths.Sensitive = globs
		w.SetConfig(&cfg)
		for _, fold := range []bool{false, true} {
			m := newGlobMatcher(globs, fold)
			for _, p := range paths {
				want := w.matchSensitive(p, fold)
				if got := m.match(p); got != want {
					t.Errorf("globs %q, fold %v: %q matches %v, matchSensitive says %v", strings.Join(globs, " "), fold, p, got, want)
				}
				if want {
					matched++
				}
			}
		}
	}
	if matched == 0 {
		t.Fatal("no path matched")
	}
}
