package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/agentls/agentls/approval"
	"github.com/agentls/agentls/htmltext"
	"github.com/agentls/agentls/workspace"
)

// WebSearch is web_search: a query to the configured search provider.
var WebSearch = builtin(Def[webSearchArgs]{
	Spec: Spec{
		Name:     "web_search",
		Category: "web",
		Title:    "Web search",
		Description: "Searches the web through the configured provider (web.search: a SearXNG instance or the Brave Search API) " +
			"and returns the results: title, URL and snippet. Read a result with web_fetch.",
		Annotations: Annotations{ReadOnly: true, Approval: "auto"},
		Risk:        approval.RiskNetwork,
		Timeout:     webSearchTimeout + 5*time.Second,
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["query"],"properties":{
			"query":{"type":"string","minLength":1,"maxLength":400,"description":"what to search for"},
			"num_results":{"type":"integer","minimum":1,"maximum":20,"default":5,"description":"how many results"}}}`),
		OutputSchema: json.RawMessage(`{"type":"object","required":["query","provider","results"],"properties":{
			"query":{"type":"string"},"provider":{"type":"string"},
			"results":{"type":"array","items":{"type":"object","required":["title","url","snippet"],"properties":{
				"title":{"type":"string"},"url":{"type":"string"},"snippet":{"type":"string"}}}}}}`),
	},
	Execute: webSearch,
})

type webSearchArgs struct {
	Query      string `json:"query"`
	NumResults int    `json:"num_results"`
}

// SearchResult is one web search hit.
type SearchResult struct {
	Title   string `json:"title"`
	URL     string `json:"url"`
	Snippet string `json:"snippet"`
}

// SearchProvider answers web searches. Search returns at most n results;
// its errors are *Error values the model may see.
type SearchProvider interface {
	Name() string
	Search(ctx context.Context, query string, n int) ([]SearchResult, error)
}

// webSearchTimeout bounds one search; webSearchMaxBody what is read of the
// provider's answer.
const (
	webSearchTimeout = 20 * time.Second
	webSearchMaxBody = 4 << 20
)

// BraveSearchURL is the Brave Search API's web endpoint.
const BraveSearchURL = "https://api.search.brave.com/res/v1/web/search"

// webSearchHowTo says how to configure a provider.
const webSearchHowTo = `set web.search in the user configuration ($XDG_CONFIG_HOME/agentls/config.json; a repository's .agentls.json may not set it): ` +
	`{"web":{"search":{"provider":"searxng","url":"https://searx.example.org"}}} for a SearXNG instance with the JSON format enabled, ` +
	`or {"web":{"search":{"provider":"brave","apiKey":"<Brave Search API key>"}}}`

// NewSearchProvider returns the provider the configuration names, or
// NOT_CONFIGURED saying how to configure one. client nil means a client
// with the default transport.
func NewSearchProvider(cfg workspace.SearchConfig, client *http.Client) (SearchProvider, error) {
	if client == nil {
		client = &http.Client{}
	}
	switch strings.ToLower(cfg.Provider) {
	case "":
		return nil, Errorf(NotConfigured, "web_search has no provider: %s", webSearchHowTo)
	case "searxng":
		if cfg.URL == "" {
			return nil, Errorf(NotConfigured, "web.search.provider is searxng but web.search.url is not set: give the instance's URL, "+
				`for example {"web":{"search":{"provider":"searxng","url":"https://searx.example.org"}}}`)
		}
		u, err := searchURL(cfg.URL)
		if err != nil {
			return nil, err
		}
		if !strings.HasSuffix(u.Path, "/search") {
			u.Path = strings.TrimSuffix(u.Path, "/") + "/search"
		}
		return &searxng{searchAPI{endpoint: u, apiKey: cfg.APIKey, client: client}}, nil
	case "brave":
		if cfg.APIKey == "" {
			return nil, Errorf(NotConfigured, "web.search.provider is brave but web.search.apiKey is not set: "+
				"get a key at https://brave.com/search/api/ and put it in the user configuration")
		}
		raw := cfg.URL
		if raw == "" {
			raw = BraveSearchURL
		}
		u, err := searchURL(raw)
		if err != nil {
			return nil, err
		}
		return &brave{searchAPI{endpoint: u, apiKey: cfg.APIKey, client: client}}, nil
	}
	return nil, Errorf(NotConfigured, "web.search.provider %q is not known (searxng or brave): %s", cfg.Provider, webSearchHowTo)
}

func searchURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, Errorf(NotConfigured, "web.search.url %q is not an http(s) URL", raw)
	}
	return u, nil
}

func webSearch(c *Call, a webSearchArgs) (*Result, error) {
	if a.NumResults <= 0 {
		a.NumResults = 5
	}
	p, err := NewSearchProvider(c.Workspace.Config().Web.Search, nil)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(c.Ctx, webSearchTimeout)
	defer cancel()
	results, err := p.Search(ctx, a.Query, a.NumResults)
	if err != nil {
		if c.Ctx.Err() != nil {
			return nil, c.Ctx.Err()
		}
		if ctx.Err() != nil {
			return nil, Errorf(Timeout, "%s did not answer within %s", p.Name(), webSearchTimeout)
		}
		return nil, err
	}
	if len(results) > a.NumResults {
		results = results[:a.NumResults]
	}
	var b strings.Builder
	for i, r := range results {
		fmt.Fprintf(&b, "%d. %s\n   %s\n", i+1, r.Title, r.URL)
		if r.Snippet != "" {
			fmt.Fprintf(&b, "   %s\n", r.Snippet)
		}
	}
	if len(results) == 0 {
		fmt.Fprintf(&b, "No results for %q.\n", a.Query)
	}
	return Success(b.String(), map[string]any{"query": a.Query, "provider": p.Name(), "results": results}), nil
}

// searchGet sends one provider request and decodes its JSON answer into v.
func searchGet(ctx context.Context, client *http.Client, name string, u *url.URL, header http.Header, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return Errorf(NotConfigured, "%s request: %v", name, err)
	}
	req.Header = header
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "agentls (+https://github.com/agentls/agentls)")
	resp, err := client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return Errorf(NetworkError, "%s (%s) cannot be reached: %v", name, u.Host, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, webSearchMaxBody))
	if err != nil {
		return Errorf(NetworkError, "%s: reading the answer: %v", name, err)
	}
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return Errorf(NotConfigured, "%s refused the request (HTTP %d): check web.search.apiKey%s", name, resp.StatusCode, searchHint(name))
	case resp.StatusCode == http.StatusTooManyRequests:
		return Errorf(NetworkError, "%s is rate limiting (HTTP 429); try again later", name)
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		return Errorf(NetworkError, "%s answered HTTP %d: %s", name, resp.StatusCode, firstLine(string(body[:min(len(body), 300)])))
	}
	if err := json.Unmarshal(body, v); err != nil {
		return Errorf(NetworkError, "%s did not answer JSON (%v)%s", name, err, searchHint(name))
	}
	return nil
}

func searchHint(name string) string {
	if name == "searxng" {
		// SearXNG answers 403 when the instance does not enable the JSON format.
		return " (a SearXNG instance must list json under search.formats in its settings.yml)"
	}
	return ""
}

// searchAPI is a provider's endpoint, key and HTTP client.
type searchAPI struct {
	endpoint *url.URL
	apiKey   string
	client   *http.Client
}

// get sends one GET to the endpoint with params added to its query
// (searchGet) and decodes the JSON answer into v.
func (s *searchAPI) get(ctx context.Context, name string, params map[string]string, h http.Header, v any) error {
	u := *s.endpoint
	q := u.Query()
	for k, val := range params {
		q.Set(k, val)
	}
	u.RawQuery = q.Encode()
	return searchGet(ctx, s.client, name, &u, h, v)
}

// firstResults makes results of at most n of a provider's hits: fields
// gives a hit's title, URL and snippet, whose markup is removed.
func firstResults[H any](hits []H, n int, fields func(H) (title, url, snippet string)) []SearchResult {
	out := []SearchResult{}
	for _, h := range hits {
		if len(out) == n {
			break
		}
		title, u, snippet := fields(h)
		out = append(out, SearchResult{Title: plainSnippet(title), URL: u, Snippet: plainSnippet(snippet)})
	}
	return out
}

// searxng queries a SearXNG instance's JSON API.
type searxng struct{ searchAPI }

func (s *searxng) Name() string { return "searxng" }

// searxngHit is one result of a SearXNG answer.
type searxngHit struct {
	Title   string `json:"title"`
	URL     string `json:"url"`
	Content string `json:"content"`
}

// Search implements SearchProvider: GET /search?q=…&format=json. An
// apiKey, when set, is sent as a bearer token (for instances behind an
// authenticating proxy).
func (s *searxng) Search(ctx context.Context, query string, n int) ([]SearchResult, error) {
	h := http.Header{}
	if s.apiKey != "" {
		h.Set("Authorization", "Bearer "+s.apiKey)
	}
	var answer struct {
		Results []searxngHit `json:"results"`
	}
	if err := s.get(ctx, s.Name(), map[string]string{"q": query, "format": "json"}, h, &answer); err != nil {
		return nil, err
	}
	return firstResults(answer.Results, n, func(r searxngHit) (string, string, string) { return r.Title, r.URL, r.Content }), nil
}

// brave queries the Brave Search API.
type brave struct{ searchAPI }

func (b *brave) Name() string { return "brave" }

// braveHit is one web result of a Brave Search answer.
type braveHit struct {
	Title       string `json:"title"`
	URL         string `json:"url"`
	Description string `json:"description"`
}

// Search implements SearchProvider: GET ?q=…&count=n with the key in
// X-Subscription-Token.
func (b *brave) Search(ctx context.Context, query string, n int) ([]SearchResult, error) {
	h := http.Header{}
	h.Set("X-Subscription-Token", b.apiKey)
	var answer struct {
		Web struct {
			Results []braveHit `json:"results"`
		} `json:"web"`
	}
	if err := b.get(ctx, b.Name(), map[string]string{"q": query, "count": strconv.Itoa(n)}, h, &answer); err != nil {
		return nil, err
	}
	return firstResults(answer.Web.Results, n, func(r braveHit) (string, string, string) { return r.Title, r.URL, r.Description }), nil
}

var snippetTag = regexp.MustCompile(`<[^>]*>`)

// plainSnippet removes the markup providers put in snippets (<strong>,
// entities) and collapses whitespace.
func plainSnippet(s string) string {
	return strings.TrimSpace(htmltext.Collapse(html.UnescapeString(snippetTag.ReplaceAllString(s, ""))))
}
