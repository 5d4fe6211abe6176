package tools

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentls/agentls/workspace"
)

// TestRetryPassingFailures: a read-only call whose first try meets rate
// limiting is tried again and answers; a call that keeps failing says so
// after its retries. (Rate limiting, not a cut connection: Go's HTTP client
// retries some of those itself, which would blur the count.)
func TestRetryPassingFailures(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1) == 1 || strings.Contains(r.URL.RawQuery, "down") {
			http.Error(w, "slow down", http.StatusTooManyRequests)
			return
		}
		fmt.Fprint(w, `{"results":[{"title":"Go","url":"https://go.dev/","content":"The Go language"}]}`)
	}))
	t.Cleanup(srv.Close)
	w := newWebRig(t, func(c *workspace.Config) { c.Web.Search = workspace.SearchConfig{Provider: "searxng", URL: srv.URL} })
	res := w.call("web_search", map[string]any{"query": "golang"})
	if res.Status != StatusSuccess || !strings.Contains(res.Content, "https://go.dev/") || hits.Load() != 2 {
		t.Errorf("after rate limiting: %d requests, %s: %s", hits.Load(), res.Status, res.Content)
	}
	hits.Store(10)
	res = w.call("web_search", map[string]any{"query": "down"})
	if res.Error == nil || res.Error.Code != NetworkError || hits.Load() != 10+1+int32(len(retryWaits)) {
		t.Errorf("a provider that stays down: %d requests, %+v", hits.Load()-10, res.Error)
	}
}
