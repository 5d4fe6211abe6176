package search

// Query is one query of the comparison with ripgrep: the same search as
// the grep tool's arguments and as ripgrep's command line.
type Query struct {
	Name string
	// Args are grep's arguments (JSON).
	Args string
	// Rg are ripgrep's arguments, pattern included, without the path.
	Rg []string
}

// Queries are the queries the benchmarks and the correctness tests run on
// $(go env GOROOT)/src: literal, regex, case-insensitive, with a glob
// filter or a type, rare and common.
var Queries = []Query{
	{"literal", `{"pattern":"NewReader"}`, []string{"NewReader"}},
	{"literal-rare", `{"pattern":"xyzzy"}`, []string{"xyzzy"}},
	{"literal-common", `{"pattern":"return nil, err"}`, []string{"return nil, err"}},
	{"regex", `{"pattern":"func \\(\\w+ \\*Reader\\) Read\\w*\\("}`, []string{`func \(\w+ \*Reader\) Read\w*\(`}},
	{"regex-inner-literal", `{"pattern":"[a-z]+Deadline\\("}`, []string{`[a-z]+Deadline\(`}},
	{"case-insensitive", `{"pattern":"deadline exceeded","case_insensitive":true}`, []string{"-i", "deadline exceeded"}},
	{"case-insensitive-regex", `{"pattern":"utf-?8 ?sequence","case_insensitive":true}`, []string{"-i", "utf-?8 ?sequence"}},
	{"glob", `{"pattern":"t\\.Fatalf","glob":"*_test.go"}`, []string{"-g", "*_test.go", `t\.Fatalf`}},
	{"type-word", `{"pattern":"Mutex","type":"go","word":true}`, []string{"-t", "go", "-w", "Mutex"}},
	{"fixed", `{"pattern":"x.(type)","fixed_strings":true}`, []string{"-F", "x.(type)"}},
	{"alternation", `{"pattern":"ErrUnexpectedEOF|ErrShortWrite"}`, []string{"ErrUnexpectedEOF|ErrShortWrite"}},
	{"anchored", `{"pattern":"^import \\($"}`, []string{`^import \($`}},
	{"no-literal", `{"pattern":"[A-Z]{4,}_[0-9]+"}`, []string{`[A-Z]{4,}_[0-9]+`}},
	{"no-literal-unicode", `{"pattern":"\\d{5,}\\s*$"}`, []string{`\d{5,}\s*$`}},
}
