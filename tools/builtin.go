package tools

// Builtins returns the built-in tools, ready to register.
func Builtins() []*Tool {
	return []*Tool{CurrentDirectory, CurrentDatetime, ReadFile, WriteFile, EditFile,
		MultiEdit, ApplyPatch, ListDirectory, CreateDirectory, DeleteFile, MoveFile, CopyFile,
		ShellExec, ShellBackground, ShellOutput, ShellKill, RunCode, Grep, Glob,
		Diagnostics, Symbols, FindDefinition, References, Hover,
		GitStatus, GitDiff, GitLog, GitCommit, GitBranch, GitPush, WebFetch, WebSearch}
}

// NewBuiltinRegistry returns a registry of the built-in tools.
func NewBuiltinRegistry() *Registry {
	r := NewRegistry(nil)
	r.MustRegister(Builtins()...)
	return r
}
