package tools

import (
	"strings"
	"testing"
)

func TestGitLog(t *testing.T) {
	g := newGitRig(t, true)
	commits := []struct{ msg, file, date, name, email string }{
		{"first", "a.txt", "2024-01-02T03:04:05+00:00", "Ada Lovelace", "ada@example.com"},
		{"second: ünïcode", "b.txt", "2024-02-03T04:05:06+01:00", "Grace Hopper", "grace@example.com"},
		{"third", "a.txt", "2024-03-04T05:06:07-05:00", "Alan Turing", "alan@example.com"},
	}
	for _, c := range commits {
		g.write(c.file, c.msg+"\n")
		g.git("add", c.file)
		g.gitIn(g.root, []string{"GIT_AUTHOR_DATE=" + c.date, "GIT_AUTHOR_NAME=" + c.name, "GIT_AUTHOR_EMAIL=" + c.email},
			"commit", "-q", "-m", c.msg+"\n\nbody line")
	}
	g.git("branch", "old", "HEAD~1")

	tests := []struct {
		name      string
		args      map[string]any
		subjects  []string
		truncated bool
	}{
		{"all", map[string]any{}, []string{"third", "second: ünïcode", "first"}, false},
		{"limit", map[string]any{"limit": 2}, []string{"third", "second: ünïcode"}, true},
		{"path", map[string]any{"path": "a.txt"}, []string{"third", "first"}, false},
		{"ref", map[string]any{"ref": "old"}, []string{"second: ünïcode", "first"}, false},
		{"range", map[string]any{"ref": "old..main"}, []string{"third"}, false},
		{"no match", map[string]any{"path": "missing.txt"}, []string{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := g.call("git_log", tt.args)
			wantSuccess(t, res)
			var s struct {
				Commits   []gitCommitInfo
				Truncated bool
			}
			decode(t, res, &s)
			var got []string
			for _, c := range s.Commits {
				got = append(got, c.Subject)
			}
			if strings.Join(got, "|") != strings.Join(tt.subjects, "|") || s.Truncated != tt.truncated {
				t.Errorf("subjects %q truncated %v, want %q %v", got, s.Truncated, tt.subjects, tt.truncated)
			}
		})
	}

	res := g.call("git_log", map[string]any{"limit": 1})
	var s struct{ Commits []gitCommitInfo }
	decode(t, res, &s)
	c := s.Commits[0]
	if len(c.Hash) != 40 || c.Author != "Alan Turing" || c.Email != "alan@example.com" || c.Date != "2024-03-04T05:06:07-05:00" {
		t.Errorf("commit %+v", c)
	}
	if !strings.Contains(res.Content, c.Hash[:12]+" 2024-03-04T05:06:07-05:00 Alan Turing <alan@example.com> third") {
		t.Errorf("content %q", res.Content)
	}

	g.refuses(t, "git_log", []refusal{
		{"unknown ref", map[string]any{"ref": "nope"}, InvalidParams, ""},
		{"tree ref", map[string]any{"ref": "HEAD:a.txt"}, InvalidParams, ""},
	})
}

func TestGitLogNoCommits(t *testing.T) {
	g := newGitRig(t, true)
	res := g.call("git_log", map[string]any{})
	wantSuccess(t, res)
	if res.Content != "No commits yet.\n" {
		t.Errorf("content %q", res.Content)
	}
}

func TestGitLogFollowsRenames(t *testing.T) {
	g := newGitRig(t, true)
	body := strings.Repeat("same\n", 20)
	g.commit("create", map[string]string{"old.txt": body})
	g.git("mv", "old.txt", "new.txt")
	g.git("commit", "-q", "-m", "rename")
	g.commit("edit", map[string]string{"new.txt": body + "more\n"})
	res := g.call("git_log", map[string]any{"path": "new.txt"})
	wantSuccess(t, res)
	var s struct{ Commits []gitCommitInfo }
	decode(t, res, &s)
	var got []string
	for _, c := range s.Commits {
		got = append(got, c.Subject)
	}
	if strings.Join(got, ",") != "edit,rename,create" {
		t.Errorf("history of new.txt: %q", got)
	}
}
