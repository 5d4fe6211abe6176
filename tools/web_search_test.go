package tools

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentls/agentls/approval"
	"github.com/agentls/agentls/workspace"
)

// The real SearXNG instances and the Brave Search API cannot be reached
// from the test machine: the servers below are local stand-ins on loopback
// that check the request each provider must send and answer in that
// provider's documented JSON shape.

// fakeSearXNG stands in for a SearXNG instance's /search?format=json.
func fakeSearXNG(t *testing.T, status int) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/searx/search" || r.URL.Query().Get("format") != "json" {
			t.Errorf("searxng request %s", r.URL)
		}
		if status != 0 {
			http.Error(w, "Forbidden", status)
			return
		}
		q := r.URL.Query().Get("q")
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"query": q,
			"results": []map[string]any{
				{"title": "Go &amp; " + q, "url": "https://go.dev/", "content": "The <b>Go</b> programming   language", "engine": "x"},
				{"title": "Second", "url": "https://example.org/2", "content": "two"},
				{"title": "Third", "url": "https://example.org/3", "content": ""},
			},
		})
	}))
	t.Cleanup(srv.Close)
	return srv
}

// fakeBrave stands in for the Brave Search API's web endpoint.
func fakeBrave(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Subscription-Token") != "test-key" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if r.URL.Query().Get("count") != "2" || r.Header.Get("Accept") != "application/json" {
			t.Errorf("brave request %s %v", r.URL, r.Header)
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"type": "search",
			"web": map[string]any{"results": []map[string]any{
				{"title": "Brave " + r.URL.Query().Get("q"), "url": "https://brave.com/", "description": "A <strong>private</strong> search"},
				{"title": "B2", "url": "https://example.com/b2", "description": "d2"},
			}},
		})
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestWebSearch(t *testing.T) {
	t.Parallel()
	searx := fakeSearXNG(t, 0)
	brave := fakeBrave(t)
	tests := []struct {
		name    string
		search  workspace.SearchConfig
		args    map[string]any
		results []SearchResult
	}{
		{"searxng", workspace.SearchConfig{Provider: "searxng", URL: searx.URL + "/searx"},
			map[string]any{"query": "golang", "num_results": 2},
			[]SearchResult{
				{Title: "Go & golang", URL: "https://go.dev/", Snippet: "The Go programming language"},
				{Title: "Second", URL: "https://example.org/2", Snippet: "two"},
			}},
		{"searxng search url", workspace.SearchConfig{Provider: "searxng", URL: searx.URL + "/searx/search"},
			map[string]any{"query": "x", "num_results": 1},
			[]SearchResult{{Title: "Go & x", URL: "https://go.dev/", Snippet: "The Go programming language"}}},
		{"brave", workspace.SearchConfig{Provider: "brave", URL: brave.URL + "/res/v1/web/search", APIKey: "test-key"},
			map[string]any{"query": "privacy", "num_results": 2},
			[]SearchResult{
				{Title: "Brave privacy", URL: "https://brave.com/", Snippet: "A private search"},
				{Title: "B2", URL: "https://example.com/b2", Snippet: "d2"},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWebRig(t, func(c *workspace.Config) { c.Web.Search = tt.search })
			w.answer = always(approval.Reject) // web_search needs no approval
			res := w.call("web_search", tt.args)
			checkOutputSchema(t, WebSearch, res)
			var s struct {
				Query, Provider string
				Results         []SearchResult
			}
			decode(t, res, &s)
			if s.Provider != tt.search.Provider || s.Query != tt.args["query"] {
				t.Errorf("provider %q query %q", s.Provider, s.Query)
			}
			if len(s.Results) != len(tt.results) {
				t.Fatalf("results %+v", s.Results)
			}
			for i := range s.Results {
				if s.Results[i] != tt.results[i] {
					t.Errorf("result %d: %+v, want %+v", i, s.Results[i], tt.results[i])
				}
			}
			if !strings.HasPrefix(res.Content, "1. "+tt.results[0].Title+"\n   "+tt.results[0].URL+"\n") {
				t.Errorf("content %q", res.Content)
			}
			if q := w.questions(); len(q) != 0 {
				t.Errorf("asked %d times", len(q))
			}
		})
	}
}

func TestWebSearchNotConfigured(t *testing.T) {
	t.Parallel()
	forbidden := fakeSearXNG(t, http.StatusForbidden)
	brave := fakeBrave(t)
	tests := []struct {
		name   string
		search workspace.SearchConfig
		code   Code
		msg    []string
	}{
		{"nothing", workspace.SearchConfig{}, NotConfigured, []string{"web.search", ".agentls.json", `"provider":"searxng"`, `"provider":"brave"`, "apiKey"}},
		{"searxng without url", workspace.SearchConfig{Provider: "searxng"}, NotConfigured, []string{"web.search.url"}},
		{"brave without key", workspace.SearchConfig{Provider: "brave"}, NotConfigured, []string{"web.search.apiKey"}},
		{"unknown provider", workspace.SearchConfig{Provider: "altavista", URL: "https://x"}, NotConfigured, []string{"not known"}},
		{"bad url", workspace.SearchConfig{Provider: "searxng", URL: "ftp://x"}, NotConfigured, []string{"not an http(s) URL"}},
		{"wrong key", workspace.SearchConfig{Provider: "brave", URL: brave.URL, APIKey: "wrong"}, NotConfigured, []string{"HTTP 401", "apiKey"}},
		{"json disabled", workspace.SearchConfig{Provider: "searxng", URL: forbidden.URL + "/searx"}, NotConfigured, []string{"HTTP 403", "search.formats"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWebRig(t, func(c *workspace.Config) { c.Web.Search = tt.search })
			res := w.call("web_search", map[string]any{"query": "q"})
			wantError(t, res, tt.code)
			for _, m := range tt.msg {
				if !strings.Contains(res.Error.Message, m) {
					t.Errorf("message lacks %q: %s", m, res.Error.Message)
				}
			}
		})
	}
}
