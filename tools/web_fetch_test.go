package tools

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentls/agentls/approval"
	"github.com/agentls/agentls/workspace"
)

// The web tests talk only to httptest servers on loopback addresses.

// webRig is a rig with the web tools, configured by edit.
type webRig struct{ *rig }

func newWebRig(t *testing.T, edit func(*workspace.Config)) *webRig {
	t.Helper()
	w := &webRig{newRig(t, "", WebFetch, WebSearch)}
	w.config(edit)
	return w
}

// webFetched is web_fetch's structured result.
type webFetched struct {
	URL         string
	Status      int
	ContentType string `json:"content_type"`
	Title       string
	Content     string
	Encoding    string
	Truncated   bool
	Bytes       int
	Redirects   []string
}

// countingServer is an httptest server on 127.0.0.1 that counts requests.
func countingServer(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// serverOn starts an httptest server on the given loopback address (Linux
// routes all of 127.0.0.0/8 to the loopback device; elsewhere the test is
// skipped when the machine has no such address).
func serverOn(t *testing.T, addr string, h http.Handler) *httptest.Server {
	t.Helper()
	l, err := net.Listen("tcp", addr+":0")
	if err != nil {
		if runtime.GOOS == "linux" {
			t.Fatalf("cannot listen on %s: %v", addr, err)
		}
		t.Skipf("cannot listen on %s: %v", addr, err)
	}
	srv := &httptest.Server{Listener: l, Config: &http.Server{Handler: h}}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

const testPage = `<!doctype html>
<html><head><title>Test  page</title><style>body { color: red }</style>
<script>var secret = "script text";</script></head>
<body>
<nav hidden>hidden menu</nav>
<h1>Main heading</h1>
<p>Some <b>bold</b> and <em>emphasis</em> text with a <a href="/docs/intro.html">relative link</a>
and <a href="javascript:alert(1)">a script link</a>.</p>
<h2>List</h2>
<ul><li>first</li><li>second<ul><li>nested</li></ul></li></ul>
<ol><li>one</li><li>two</li></ol>
<pre><code class="language-go">func main() {
	println("hi")
}</code></pre>
<table><tr><th>Name</th><th>Value</th></tr><tr><td>a</td><td>1</td></tr></table>
<blockquote><p>quoted</p></blockquote>
<img src="pic.png" alt="a picture">
<noscript>enable javascript</noscript>
<div style="display: none">invisible</div>
</body></html>`

const testPageMarkdown = "# Main heading\n\n" +
	"Some **bold** and *emphasis* text with a [relative link](%s/docs/intro.html) and a script link.\n\n" +
	"## List\n\n" +
	"- first\n- second\n  - nested\n\n" +
	"1. one\n2. two\n\n" +
	"```go\nfunc main() {\n\tprintln(\"hi\")\n}\n```\n\n" +
	"| Name | Value |\n| --- | --- |\n| a | 1 |\n\n" +
	"> quoted\n\n" +
	"![a picture](%s/pic.png)\n"

const testPageText = "Main heading\n\n" +
	"Some bold and emphasis text with a relative link and a script link.\n\n" +
	"List\n\n" +
	"- first\n- second\n  - nested\n\n" +
	"1. one\n2. two\n\n" +
	"func main() {\n\tprintln(\"hi\")\n}\n\n" +
	"Name | Value\na | 1\n\n" +
	"  quoted\n\n" +
	"a picture\n"

// TestWebFetchRefusesLoopback: without web.allowPrivate no loopback server
// is reached, whether the URL names its address or a name that resolves to
// it (the check runs on the resolved address, when connecting).
func TestWebFetchRefusesLoopback(t *testing.T) {
	t.Parallel()
	srv, hits := countingServer(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "reached") })
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	w := newWebRig(t, func(c *workspace.Config) { c.Web.Allow = []string{"127.0.0.1", "localhost"} })
	tests := []struct {
		name, url string
		want      string
	}{
		{"address", srv.URL, "127.0.0.1: loopback address"},
		{"ipv6", fmt.Sprintf("http://[::1]:%d/", port), "::1: loopback address"},
		{"mapped", fmt.Sprintf("http://[::ffff:127.0.0.1]:%d/", port), "loopback address"},
		{"unspecified", fmt.Sprintf("http://0.0.0.0:%d/", port), "unspecified address"},
		{"link-local metadata", "http://169.254.169.254/latest/meta-data/", "link-local address"},
		// A name is judged on the address it resolves to, when connecting.
		{"name", fmt.Sprintf("http://localhost:%d/", port), "localhost (resolved to"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := w.call("web_fetch", map[string]any{"url": tt.url, "timeout_seconds": 5})
			wantError(t, res, PermissionDenied)
			if !strings.Contains(res.Error.Message, tt.want) || !strings.Contains(res.Error.Message, "web.allowPrivate") {
				t.Errorf("message %q", res.Error.Message)
			}
			w.questions()
		})
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the loopback server was reached %d times", n)
	}
}

func TestWebFetchAllowedLocal(t *testing.T) {
	t.Parallel()
	srv, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/page":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, testPage)
		case "/latin1":
			w.Header().Set("Content-Type", "text/plain; charset=iso-8859-1")
			w.Write([]byte("caf\xe9"))
		case "/json":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"a": [1, 2]}`)
		case "/png":
			w.Header().Set("Content-Type", "image/png")
			w.Write([]byte("\x89PNG\r\n\x1a\n\x00\x00"))
		case "/missing":
			http.NotFound(w, r)
		case "/echo":
			b, _ := io.ReadAll(r.Body)
			fmt.Fprintf(w, "%s %s %s %s", r.Method, r.Header.Get("X-Test"), r.Header.Get("User-Agent"), b)
		}
	})
	w := newWebRig(t, func(c *workspace.Config) {
		c.Web.AllowPrivate = true
		c.Web.Allow = []string{"127.0.0.1"}
	})
	w.answer = always(approval.Reject) // an allowed host is fetched without asking
	tests := []struct {
		name  string
		args  map[string]any
		check func(t *testing.T, f webFetched, content string)
	}{
		{"markdown", map[string]any{"url": srv.URL + "/page"}, func(t *testing.T, f webFetched, content string) {
			want := fmt.Sprintf(testPageMarkdown, srv.URL, srv.URL)
			if f.Content != want || f.Title != "Test page" || f.Status != 200 {
				t.Errorf("markdown:\n%s\nwant:\n%s", f.Content, want)
			}
		}},
		{"text", map[string]any{"url": srv.URL + "/page", "format": "text"}, func(t *testing.T, f webFetched, content string) {
			if f.Content != testPageText {
				t.Errorf("text:\n%q\nwant:\n%q", f.Content, testPageText)
			}
		}},
		{"raw", map[string]any{"url": srv.URL + "/page", "format": "raw"}, func(t *testing.T, f webFetched, content string) {
			if f.Content != testPage {
				t.Errorf("raw:\n%s", f.Content)
			}
		}},
		{"charset", map[string]any{"url": srv.URL + "/latin1"}, func(t *testing.T, f webFetched, content string) {
			if f.Content != "café" {
				t.Errorf("latin1 %q", f.Content)
			}
		}},
		{"json", map[string]any{"url": srv.URL + "/json"}, func(t *testing.T, f webFetched, content string) {
			if f.Content != `{"a": [1, 2]}` {
				t.Errorf("json %q", f.Content)
			}
		}},
		{"binary", map[string]any{"url": srv.URL + "/png"}, func(t *testing.T, f webFetched, content string) {
			if !strings.Contains(f.Content, "binary content (image/png, 10 bytes)") {
				t.Errorf("binary %q", f.Content)
			}
		}},
		{"binary raw", map[string]any{"url": srv.URL + "/png", "format": "raw"}, func(t *testing.T, f webFetched, content string) {
			if f.Encoding != "base64" || f.Content != "iVBORw0KGgoAAA==" {
				t.Errorf("raw binary %q %q", f.Encoding, f.Content)
			}
		}},
		{"not found", map[string]any{"url": srv.URL + "/missing"}, func(t *testing.T, f webFetched, content string) {
			if f.Status != 404 || !strings.HasPrefix(content, "HTTP 404 Not Found") {
				t.Errorf("404: %d %q", f.Status, content)
			}
		}},
		{"head", map[string]any{"url": srv.URL + "/json", "method": "HEAD"}, func(t *testing.T, f webFetched, content string) {
			if !strings.Contains(f.Content, "Content-Type: application/json") {
				t.Errorf("head %q", f.Content)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := w.call("web_fetch", tt.args)
			wantSuccess(t, res)
			if res.ApprovedBy != "config" {
				t.Errorf("approved by %q", res.ApprovedBy)
			}
			checkOutputSchema(t, WebFetch, res)
			var f webFetched
			decode(t, res, &f)
			tt.check(t, f, res.Content)
		})
	}
	if q := w.questions(); len(q) != 0 {
		t.Errorf("allowed host asked %d times", len(q))
	}

	// A request that changes something asks, even on an allowed host.
	w.answer = always(approval.Approve)
	res := w.call("web_fetch", map[string]any{"url": srv.URL + "/echo", "method": "POST", "body": "payload",
		"headers": map[string]string{"X-Test": "yes"}, "format": "raw"})
	wantSuccess(t, res)
	if !strings.HasPrefix(res.Content, "POST yes agentls") || !strings.HasSuffix(res.Content, "payload") {
		t.Errorf("echo %q", res.Content)
	}
	q := w.questions()
	if len(q) != 1 || q[0].Risk != approval.RiskNetwork || !strings.Contains(q[0].Warning, "POST") {
		t.Errorf("POST questions %+v", q)
	}
}

// TestWebFetchAsks: a host off the allow list asks, as a network call.
func TestWebFetchAsks(t *testing.T) {
	t.Parallel()
	srv, hits := countingServer(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "hello") })
	w := newWebRig(t, func(c *workspace.Config) { c.Web.AllowPrivate = true })
	w.answer = always(approval.Reject)
	res := w.call("web_fetch", map[string]any{"url": srv.URL})
	if res.Status != StatusRejected || hits.Load() != 0 {
		t.Fatalf("%s %s, %d hits", res.Status, res.Content, hits.Load())
	}
	q := w.questions()
	if len(q) != 1 || q[0].Risk != approval.RiskNetwork {
		t.Fatalf("questions %+v", q)
	}
	w.answer = always(approval.Approve)
	res = w.call("web_fetch", map[string]any{"url": srv.URL})
	wantSuccess(t, res)
	if res.Content != "hello" || res.ApprovedBy != "user" {
		t.Errorf("%q by %s", res.Content, res.ApprovedBy)
	}
}

// TestWebFetchRedirectToPrivate: the first server counts as public here and
// redirects to a second loopback address that stands in for a private one;
// the redirect's connection is refused.
func TestWebFetchRedirectToPrivate(t *testing.T) {
	private := netip.MustParseAddr("127.0.0.2")
	var inner atomic.Int32
	target := serverOn(t, private.String(), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inner.Add(1)
		fmt.Fprint(w, "internal secrets")
	}))
	front, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+"/admin", http.StatusFound)
	})
	orig := webBlockedAddr
	webBlockedAddr = func(ip netip.Addr) string {
		if ip == private {
			return "private address"
		}
		return "" // the front server stands in for a public one
	}
	t.Cleanup(func() { webBlockedAddr = orig })
	w := newWebRig(t, nil)
	res := w.call("web_fetch", map[string]any{"url": front.URL})
	wantError(t, res, PermissionDenied)
	if !strings.Contains(res.Error.Message, "refused to connect to 127.0.0.2: private address") ||
		!strings.Contains(res.Error.Message, "redirected from") || inner.Load() != 0 {
		t.Errorf("%q, inner reached %d times", res.Error.Message, inner.Load())
	}
}

func TestWebFetchRedirects(t *testing.T) {
	t.Parallel()
	other, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "elsewhere") })
	var srv *httptest.Server
	srv, hits := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		case "/twice":
			http.Redirect(w, r, "/once", http.StatusMovedPermanently)
		case "/once":
			http.Redirect(w, r, "/final", http.StatusFound)
		case "/final":
			fmt.Fprint(w, "arrived")
		case "/away":
			http.Redirect(w, r, other.URL+"/", http.StatusFound)
		case "/ftp":
			http.Redirect(w, r, "ftp://example.com/file", http.StatusFound)
		}
	})
	// The allow list names this server's port only.
	w := newWebRig(t, func(c *workspace.Config) {
		c.Web.AllowPrivate = true
		c.Web.Allow = []string{srv.Listener.Addr().String()}
	})
	res := w.call("web_fetch", map[string]any{"url": srv.URL + "/twice"})
	wantSuccess(t, res)
	var f webFetched
	decode(t, res, &f)
	if f.Content != "arrived" || f.URL != srv.URL+"/final" || len(f.Redirects) != 2 {
		t.Errorf("redirected %+v", f)
	}

	hits.Store(0)
	res = w.call("web_fetch", map[string]any{"url": srv.URL + "/loop"})
	wantError(t, res, NetworkError)
	if !strings.Contains(res.Error.Message, "stopped after 5 redirects") || hits.Load() != 6 {
		t.Errorf("%q after %d requests", res.Error.Message, hits.Load())
	}

	res = w.call("web_fetch", map[string]any{"url": srv.URL + "/ftp"})
	wantError(t, res, NetworkError)

	// Let through by the allow list, the call may not wander off it.
	res = w.call("web_fetch", map[string]any{"url": srv.URL + "/away"})
	wantError(t, res, PermissionDenied)
	if !strings.Contains(res.Error.Message, "not on web.allow") {
		t.Errorf("%q", res.Error.Message)
	}
	if q := w.questions(); len(q) != 0 {
		t.Errorf("asked %d times", len(q))
	}
}

func TestWebFetchLimits(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/big":
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprint(w, strings.Repeat("0123456789\n", 10000))
		case "/slow":
			select {
			case <-r.Context().Done():
			case <-release:
			}
		}
	})
	t.Cleanup(func() { close(release) })
	w := newWebRig(t, func(c *workspace.Config) {
		c.Web.AllowPrivate = true
		c.Web.Allow = []string{"127.0.0.1"}
		c.Limits.MaxOutputBytes = 2000
	})

	res := w.call("web_fetch", map[string]any{"url": srv.URL + "/big", "max_bytes": 1000})
	wantSuccess(t, res)
	var f webFetched
	decode(t, res, &f)
	if !f.Truncated || f.Bytes != 1000 || len(f.Content) != 1000 || !strings.Contains(res.Content, "[body cut at max_bytes: 1000 bytes read]") {
		t.Errorf("max_bytes: truncated %v, %d bytes, %d content", f.Truncated, f.Bytes, len(f.Content))
	}
	res = w.call("web_fetch", map[string]any{"url": srv.URL + "/big"})
	decode(t, res, &f)
	if !f.Truncated || len(f.Content) > 2000 || f.Bytes != 110000 || !strings.Contains(res.Content, "of 110000 bytes shown") {
		t.Errorf("output cap: truncated %v, %d bytes, %d content", f.Truncated, f.Bytes, len(f.Content))
	}

	// The server never answers /slow until the test ends: only the timeout
	// can end the call.
	res = w.call("web_fetch", map[string]any{"url": srv.URL + "/slow", "timeout_seconds": 1})
	wantError(t, res, Timeout)
}

func TestWebFetchInvalid(t *testing.T) {
	t.Parallel()
	w := newWebRig(t, func(c *workspace.Config) { c.Web.AllowPrivate = true })
	for _, args := range []map[string]any{
		{"url": "ftp://example.com/x"},
		{"url": "file:///etc/passwd"},
		{"url": "example.com"},
		{"url": "http:///path"},
		{"url": "http://127.0.0.1/", "headers": map[string]string{"Host": "other"}},
		{"url": "http://127.0.0.1/", "headers": map[string]string{"Bad Name": "x"}},
		{"url": "http://127.0.0.1/", "headers": map[string]string{"X-Split": "a\r\nInjected: yes"}},
		{"url": "http://127.0.0.1/", "format": "pdf"},
	} {
		res := w.call("web_fetch", args)
		wantError(t, res, InvalidParams)
	}
	if q := w.questions(); len(q) != 0 {
		t.Errorf("invalid calls asked %d times", len(q))
	}
}

func TestWebHostAllowed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		allow []string
		url   string
		want  bool
	}{
		{[]string{"example.com"}, "https://example.com/x", true},
		{[]string{"Example.COM"}, "https://example.com./x", true},
		{[]string{"example.com"}, "https://www.example.com/", false},
		{[]string{"*.example.com"}, "https://docs.example.com/", true},
		{[]string{"*.example.com"}, "https://example.com/", false},
		{[]string{"*.example.com"}, "https://badexample.com/", false},
		{[]string{"example.com:8443"}, "https://example.com:8443/", true},
		{[]string{"example.com:8443"}, "https://example.com/", false},
		{[]string{"example.com:443"}, "https://example.com/", true},
		{[]string{"https://example.com/docs"}, "https://example.com/other", true},
		{[]string{"[::1]:80"}, "http://[::1]/", true},
		{[]string{"example.com"}, "https://example.com.evil.org/", false},
	}
	for _, tt := range tests {
		u, _ := webURL(tt.url)
		if got := webHostAllowed(tt.allow, u); got != tt.want {
			t.Errorf("%v allows %s = %v", tt.allow, tt.url, got)
		}
	}
}

func TestWebAddrClass(t *testing.T) {
	t.Parallel()
	tests := []struct {
		ip   string
		want string
	}{
		{"127.0.0.1", "loopback address"},
		{"10.1.2.3", "private address"},
		{"172.16.0.1", "private address"},
		{"192.168.1.1", "private address"},
		{"169.254.169.254", "link-local address"},
		{"0.0.0.0", "unspecified address"},
		{"224.0.0.1", "multicast address"},
		{"100.64.0.1", "shared (carrier-grade NAT) address"},
		{"::1", "loopback address"},
		{"fd00::1", "private address"},
		{"fe80::1", "link-local address"},
		{"::ffff:10.0.0.1", "private address"},
		{"64:ff9b::7f00:1", "loopback address"},
		{"2002:c0a8:0101::1", "private address"},
		{"8.8.8.8", ""},
		{"2001:4860:4860::8888", ""},
	}
	for _, tt := range tests {
		if got := webAddrClass(netip.MustParseAddr(tt.ip)); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.ip, got, tt.want)
		}
	}
}
