package search

import (
	"maps"
	"slices"
	"strings"
)

// fileTypes are ripgrep's type names for the common languages and the file
// name globs of each (ripgrep 14's definitions).
var fileTypes = map[string][]string{
	"asm":      {"*.S", "*.asm", "*.s"},
	"bazel":    {"*.BUILD", "*.bazel", "*.bazelrc", "*.bzl", "BUILD", "WORKSPACE"},
	"c":        {"*.[chH]", "*.[chH].in", "*.cats"},
	"clojure":  {"*.clj", "*.cljc", "*.cljs", "*.cljx"},
	"cmake":    {"*.cmake", "CMakeLists.txt"},
	"config":   {"*.cfg", "*.conf", "*.config", "*.ini"},
	"cpp":      {"*.[ChH]", "*.[ChH].in", "*.[ch]pp", "*.[ch]pp.in", "*.[ch]xx", "*.[ch]xx.in", "*.cc", "*.cc.in", "*.hh", "*.hh.in", "*.inl"},
	"cs":       {"*.cs"},
	"csharp":   {"*.cs"},
	"css":      {"*.css", "*.scss"},
	"csv":      {"*.csv"},
	"dart":     {"*.dart"},
	"diff":     {"*.diff", "*.patch"},
	"docker":   {"*Dockerfile*"},
	"elixir":   {"*.eex", "*.ex", "*.exs"},
	"elm":      {"*.elm"},
	"erlang":   {"*.erl", "*.hrl"},
	"fish":     {"*.fish"},
	"go":       {"*.go"},
	"gradle":   {"*.gradle", "*.gradle.kts"},
	"graphql":  {"*.graphql", "*.graphqls"},
	"haskell":  {"*.c2hs", "*.cpphs", "*.hs", "*.hsc", "*.lhs"},
	"html":     {"*.ejs", "*.htm", "*.html"},
	"java":     {"*.java", "*.jsp", "*.jspx", "*.properties"},
	"jinja":    {"*.j2", "*.jinja", "*.jinja2"},
	"js":       {"*.cjs", "*.js", "*.jsx", "*.mjs", "*.vue"},
	"json":     {"*.json", "composer.lock", "*.sarif"},
	"jsonl":    {"*.jsonl"},
	"julia":    {"*.jl"},
	"kotlin":   {"*.kt", "*.kts"},
	"less":     {"*.less"},
	"lua":      {"*.lua"},
	"make":     {"*.mak", "*.mk", "[Gg][Nn][Uu]makefile", "[Gg][Nn][Uu]makefile.am", "[Gg][Nn][Uu]makefile.in", "[Mm]akefile", "[Mm]akefile.am", "[Mm]akefile.in"},
	"markdown": {"*.markdown", "*.md", "*.mdown", "*.mdwn", "*.mdx", "*.mkd", "*.mkdn"},
	"md":       {"*.markdown", "*.md", "*.mdown", "*.mdwn", "*.mdx", "*.mkd", "*.mkdn"},
	"nix":      {"*.nix"},
	"objc":     {"*.h", "*.m"},
	"ocaml":    {"*.ml", "*.mli", "*.mll", "*.mly"},
	"perl":     {"*.PL", "*.perl", "*.pl", "*.plh", "*.plx", "*.pm", "*.t"},
	"php":      {"*.php", "*.php3", "*.php4", "*.php5", "*.phpt", "*.phtml"},
	"protobuf": {"*.proto"},
	"ps":       {"*.cdxml", "*.ps1", "*.ps1xml", "*.psd1", "*.psm1"},
	"py":       {"*.py", "*.pyi"},
	"r":        {"*.R", "*.Rmd", "*.Rnw", "*.r"},
	"rst":      {"*.rst"},
	"ruby":     {"*.gemspec", "*.rb", "*.rbw", ".irbrc", "Gemfile", "Rakefile", "config.ru"},
	"rust":     {"*.rs"},
	"sass":     {"*.sass", "*.scss"},
	"scala":    {"*.sbt", "*.scala"},
	"sh":       {"*.bash", "*.bashrc", "*.csh", "*.cshrc", "*.ksh", "*.kshrc", "*.sh", "*.tcsh", "*.zsh", ".bash_login", ".bash_logout", ".bash_profile", ".bashrc", ".cshrc", ".kshrc", ".login", ".logout", ".profile", ".tcshrc", ".zlogin", ".zlogout", ".zprofile", ".zshenv", ".zshrc", "bash_login", "bash_logout", "bash_profile", "bashrc", "profile", "zlogin", "zlogout", "zprofile", "zshenv", "zshrc"},
	"sql":      {"*.psql", "*.sql"},
	"svelte":   {"*.svelte"},
	"swift":    {"*.swift"},
	"tex":      {"*.bib", "*.cls", "*.dtx", "*.ins", "*.ltx", "*.sty", "*.tex"},
	"tf":       {"*.tf", "*.tfvars"},
	"toml":     {"*.toml", "Cargo.lock"},
	"ts":       {"*.cts", "*.mts", "*.ts", "*.tsx"},
	"txt":      {"*.txt"},
	"vim":      {"*.vim"},
	"vue":      {"*.vue"},
	"xml":      {"*.dtd", "*.rng", "*.sch", "*.xhtml", "*.xjb", "*.xml", "*.xml.dist", "*.xsd", "*.xsl", "*.xslt"},
	"yaml":     {"*.yaml", "*.yml"},
	"zig":      {"*.zig"},
}

// typeAliases are other names models use for the same types.
var typeAliases = map[string]string{
	"python": "py", "javascript": "js", "typescript": "ts", "rs": "rust", "golang": "go",
	"shell": "sh", "bash": "sh", "yml": "yaml", "c++": "cpp", "cxx": "cpp", "rb": "ruby",
	"kt": "kotlin", "proto": "protobuf", "makefile": "make", "htm": "html", "tsx": "ts", "jsx": "js",
}

// typeNames lists the known type names, sorted.
func typeNames() []string {
	return slices.Sorted(maps.Keys(fileTypes))
}

// lookupType returns the globs of a type name (several may be given,
// separated by commas).
func lookupType(name string) ([]string, bool) {
	var globs []string
	for _, n := range strings.Split(name, ",") {
		n = strings.ToLower(strings.TrimSpace(n))
		if a, ok := typeAliases[n]; ok {
			n = a
		}
		g, ok := fileTypes[n]
		if !ok {
			return nil, false
		}
		globs = append(globs, g...)
	}
	return globs, true
}
