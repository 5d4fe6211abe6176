package tools

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"golang.org/x/net/html/charset"

	"github.com/agentls/agentls/approval"
	"github.com/agentls/agentls/htmltext"
	"github.com/agentls/agentls/workspace"
)

// WebFetch is web_fetch: one HTTP(S) request, the answer as readable text,
// Markdown or the raw body.
var WebFetch = builtin(Def[webFetchArgs]{
	Spec: Spec{
		Name:     "web_fetch",
		Category: "web",
		Title:    "Fetch URL",
		Description: "Fetches an http(s) URL and returns the body: format markdown (default) or text turn HTML into readable text " +
			"(scripts and styles dropped; Markdown keeps headings, lists, code blocks, tables and links); raw returns the body as is " +
			"(binary bodies base64). Other text types (JSON, plain text) come back unchanged. method, headers and body make other " +
			"requests. At most max_bytes of the body are read (default 1 MiB) and the request ends after timeout_seconds " +
			"(default 30); at most 5 redirects are followed. Hosts on web.allow are fetched without asking, others ask. " +
			"Private, loopback and link-local addresses are refused unless web.allowPrivate. Non-2xx answers are not errors: " +
			"see status.",
		Annotations: Annotations{Approval: "ask"},
		Risk:        approval.RiskNetwork,
		Timeout:     webMaxTimeout + 10*time.Second,
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["url"],"properties":{
			"url":{"type":"string","minLength":1,"description":"an http or https URL"},
			"method":{"enum":["GET","HEAD","POST","PUT","PATCH","DELETE","OPTIONS"],"default":"GET"},
			"headers":{"type":"object","additionalProperties":{"type":"string"},"description":"request headers"},
			"body":{"type":"string","description":"request body (for POST, PUT, PATCH)"},
			"timeout_seconds":{"type":"integer","minimum":1,"maximum":120,"default":30},
			"max_bytes":{"type":"integer","minimum":1,"maximum":10485760,"default":1048576,"description":"most bytes of the body to read"},
			"format":{"enum":["markdown","text","raw"],"default":"markdown"}}}`),
		OutputSchema: json.RawMessage(`{"type":"object","required":["url","status","content_type","format","content","truncated","bytes"],"properties":{
			"url":{"type":"string","description":"the final URL, after redirects"},
			"status":{"type":"integer"},"status_text":{"type":"string"},
			"content_type":{"type":"string"},"format":{"type":"string"},
			"title":{"type":"string"},"content":{"type":"string"},
			"encoding":{"enum":["utf-8","base64"]},
			"truncated":{"type":"boolean","description":"the body was longer than max_bytes, or the text longer than limits.maxOutputBytes"},
			"bytes":{"type":"integer","description":"body bytes read"},
			"redirects":{"type":"array","items":{"type":"string"}},
			"headers":{"type":"object","additionalProperties":{"type":"string"}}}}`),
	},
	Validate: func(a webFetchArgs) error {
		if _, err := webURL(a.URL); err != nil {
			return err
		}
		for k := range a.Headers {
			switch http.CanonicalHeaderKey(k) {
			case "Host", "Content-Length", "Transfer-Encoding", "Connection", "Te", "Upgrade", "Trailer":
				return Errorf(InvalidParams, "header %s is set by the client, not by the call", k)
			}
			if !validHeaderName(k) {
				return Errorf(InvalidParams, "header name %q is not valid", k)
			}
			if strings.ContainsAny(a.Headers[k], "\r\n\x00") {
				return Errorf(InvalidParams, "header %s: the value may not contain line breaks or NUL", k)
			}
		}
		return nil
	},
	Assess:  assessWebFetch,
	Execute: webFetch,
})

type webFetchArgs struct {
	URL            string            `json:"url"`
	Method         string            `json:"method"`
	Headers        map[string]string `json:"headers"`
	Body           string            `json:"body"`
	TimeoutSeconds int               `json:"timeout_seconds"`
	MaxBytes       int64             `json:"max_bytes"`
	Format         string            `json:"format"`
}

// webMaxTimeout is the longest timeout_seconds; webMaxRedirects the most
// redirects followed.
const (
	webMaxTimeout   = 120 * time.Second
	webMaxRedirects = 5
)

// webURL parses and checks a URL argument.
func webURL(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return nil, Errorf(InvalidParams, "url %q does not parse: %v", raw, err)
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
	case "":
		return nil, Errorf(InvalidParams, "url %q has no scheme: give http:// or https://", raw)
	default:
		return nil, Errorf(InvalidParams, "url scheme %q is not allowed: only http and https", u.Scheme)
	}
	if u.Hostname() == "" {
		return nil, Errorf(InvalidParams, "url %q has no host", raw)
	}
	return u, nil
}

func validHeaderName(k string) bool {
	if k == "" {
		return false
	}
	for _, r := range k {
		if r <= ' ' || r >= 0x7f || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, r) {
			return false
		}
	}
	return true
}

// webSafeMethods are the methods an allow-listed host gets without asking:
// they only read.
var webSafeMethods = map[string]bool{"GET": true, "HEAD": true, "OPTIONS": true, "": true}

func assessWebFetch(c *Call, a webFetchArgs) (Assessment, error) {
	u, err := webURL(a.URL)
	if err != nil {
		return Assessment{}, err
	}
	cfg := c.Workspace.Config().Web
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	// An address written into the URL is judged before anybody is asked;
	// names are judged after resolution, when the connection is made.
	if ip, err := netip.ParseAddr(host); err == nil && !cfg.AllowPrivate {
		if why := webBlockedAddr(ip); why != "" {
			return Assessment{}, webPrivateError(host, ip, why)
		}
	}
	as := Assessment{Assessment: approval.Assessment{Risk: approval.RiskNetwork, AlwaysKey: "web_fetch:" + host}}
	if webHostAllowed(cfg.Allow, u) && webSafeMethods[strings.ToUpper(a.Method)] {
		as.AutoByConfig = true
	}
	if !webSafeMethods[strings.ToUpper(a.Method)] {
		as.Warning = fmt.Sprintf("sends a %s request to %s", strings.ToUpper(a.Method), host)
		as.AlwaysKey = "web_fetch:" + strings.ToUpper(a.Method) + ":" + host
	}
	return as, nil
}

// webHostAllowed reports whether u's host is on the allow list. An entry is
// a host name ("example.com"), a wildcard for its subdomains
// ("*.example.com"), either with a port ("example.com:8443"), an IP
// address, or a URL whose host is taken.
func webHostAllowed(allow []string, u *url.URL) bool {
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[strings.ToLower(u.Scheme)]
	}
	for _, e := range allow {
		e = strings.ToLower(strings.TrimSpace(e))
		if i := strings.Index(e, "://"); i >= 0 {
			e = e[i+3:]
		}
		if i := strings.IndexByte(e, '/'); i >= 0 {
			e = e[:i]
		}
		ehost, eport := e, ""
		if h, p, err := net.SplitHostPort(e); err == nil {
			ehost, eport = h, p
		}
		ehost = strings.Trim(strings.TrimSuffix(ehost, "."), "[]")
		if eport != "" && eport != port {
			continue
		}
		if sub, ok := strings.CutPrefix(ehost, "*."); ok {
			if strings.HasSuffix(host, "."+sub) {
				return true
			}
			continue
		}
		if ehost == host {
			return true
		}
	}
	return false
}

// webExtraBlocked are special-purpose ranges that netip's predicates do not
// cover.
var webExtraBlocked = []struct {
	prefix netip.Prefix
	why    string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "\"this network\" address"},
	{netip.MustParsePrefix("100.64.0.0/10"), "shared (carrier-grade NAT) address"},
	{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol address"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking address"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved address"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "local NAT64 address"},
}

// webBlockedAddr says why an address may not be fetched without
// web.allowPrivate, or "" when it may. Tests replace it to tell two
// loopback addresses apart.
var webBlockedAddr = webAddrClass

// webAddrClass classifies an address: loopback, private, link-local,
// unspecified, multicast and special-purpose ranges are refused. IPv4
// addresses inside IPv6 (mapped, NAT64, 6to4) are judged as IPv4.
func webAddrClass(ip netip.Addr) string {
	ip = ip.Unmap()
	if ip.Is6() {
		b := ip.As16()
		switch {
		case netip.MustParsePrefix("64:ff9b::/96").Contains(ip):
			return webAddrClass(netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}))
		case netip.MustParsePrefix("2002::/16").Contains(ip):
			return webAddrClass(netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}))
		}
	}
	switch {
	case ip.IsLoopback():
		return "loopback address"
	case ip.IsUnspecified():
		return "unspecified address"
	case ip.IsPrivate():
		return "private address"
	case ip.IsLinkLocalUnicast():
		return "link-local address"
	case ip.IsMulticast(), ip.IsLinkLocalMulticast(), ip.IsInterfaceLocalMulticast():
		return "multicast address"
	case ip == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return "broadcast address"
	}
	for _, b := range webExtraBlocked {
		if b.prefix.Contains(ip) {
			return b.why
		}
	}
	return ""
}

// webAddrError is a connection refused because of its address.
type webAddrError struct {
	ip  netip.Addr
	why string
}

func (e *webAddrError) Error() string { return fmt.Sprintf("%s is a %s", e.ip, e.why) }

func webPrivateError(host string, ip netip.Addr, why string) *Error {
	what := host
	if host != ip.String() {
		what = fmt.Sprintf("%s (resolved to %s)", host, ip)
	}
	return Errorf(PermissionDenied, "refused to connect to %s: %s; private, loopback and link-local addresses "+
		"need web.allowPrivate in the user configuration", what, why).
		WithDetails(map[string]any{"host": host, "address": ip.String(), "reason": why})
}

// webTransport makes the connections of one call. Unless allowPrivate, the
// address every connection goes to is checked after name resolution, just
// before connecting, so neither a name that resolves to a private address
// (DNS rebinding included) nor a redirect can reach one. Proxies from the
// environment are not used: a proxy would resolve names where this check
// cannot see them.
func webTransport(allowPrivate bool, timeout time.Duration) *http.Transport {
	d := &net.Dialer{Timeout: timeout, KeepAlive: -1}
	if !allowPrivate {
		d.Control = func(network, address string, _ syscall.RawConn) error {
			host, _, err := net.SplitHostPort(address)
			if err != nil {
				return fmt.Errorf("dial %s: %w", address, err)
			}
			ip, err := netip.ParseAddr(host)
			if err != nil {
				return fmt.Errorf("dial %s: not an address", address)
			}
			if why := webBlockedAddr(ip); why != "" {
				return &webAddrError{ip: ip, why: why}
			}
			return nil
		}
	}
	return &http.Transport{
		Proxy:                 nil,
		DialContext:           d.DialContext,
		ForceAttemptHTTP2:     true,
		TLSHandshakeTimeout:   timeout,
		ResponseHeaderTimeout: timeout,
		MaxIdleConns:          4,
		IdleConnTimeout:       time.Second,
	}
}

func webFetch(c *Call, a webFetchArgs) (*Result, error) {
	u, err := webURL(a.URL)
	if err != nil {
		return nil, err
	}
	if a.Method == "" {
		a.Method = "GET"
	}
	if a.Format == "" {
		a.Format = "markdown"
	}
	if a.TimeoutSeconds <= 0 {
		a.TimeoutSeconds = 30
	}
	if a.MaxBytes <= 0 {
		a.MaxBytes = 1 << 20
	}
	cfg := c.Workspace.Config()
	timeout := min(time.Duration(a.TimeoutSeconds)*time.Second, webMaxTimeout)
	ctx, cancel := context.WithTimeout(c.Ctx, timeout)
	defer cancel()

	// A call let through by the allow list stays on allowed hosts.
	byList := c.Assessed.AutoByConfig && c.Decision.By == "config" && cfg.Approval.Tools[c.Tool.Name] != "auto"
	tr := webTransport(cfg.Web.AllowPrivate, timeout)
	defer tr.CloseIdleConnections()
	var redirects []string
	current := u // the URL being fetched: the last redirect's target
	client := &http.Client{Transport: tr, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) > webMaxRedirects {
			return Errorf(NetworkError, "stopped after %d redirects (last to %s)", webMaxRedirects, req.URL)
		}
		if _, err := webURL(req.URL.String()); err != nil {
			return Errorf(NetworkError, "redirect to %s refused: only http and https", req.URL)
		}
		if byList && !webHostAllowed(cfg.Web.Allow, req.URL) {
			return Errorf(PermissionDenied, "%s redirects to %s, whose host is not on web.allow; fetch that URL itself "+
				"(which asks for approval)", via[len(via)-1].URL, req.URL).WithDetails(map[string]any{"location": req.URL.String()})
		}
		redirects = append(redirects, req.URL.String())
		current = req.URL
		return nil
	}}

	var body io.Reader
	if a.Body != "" {
		body = strings.NewReader(a.Body)
	}
	req, err := http.NewRequestWithContext(ctx, a.Method, u.String(), body)
	if err != nil {
		return nil, Errorf(InvalidParams, "request: %v", err)
	}
	req.Header.Set("User-Agent", "agentls (+https://github.com/agentls/agentls)")
	if a.Format != "raw" {
		req.Header.Set("Accept", "text/html,application/xhtml+xml,text/markdown;q=0.9,text/plain;q=0.9,*/*;q=0.5")
	}
	for k, v := range a.Headers {
		req.Header.Set(k, v)
	}
	if c.Progress != nil {
		c.Progress.Report("fetching "+u.Redacted(), -1)
	}
	resp, err := client.Do(req)
	if err != nil {
		e := webError(c, ctx, current, timeout, err)
		if te, ok := e.(*Error); ok && len(redirects) > 0 && te.Code == PermissionDenied {
			te.Message = fmt.Sprintf("redirected from %s to %s: %s", u.Redacted(), current.Redacted(), te.Message)
		}
		return nil, e
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, a.MaxBytes+1))
	if err != nil {
		return nil, webError(c, ctx, resp.Request.URL, timeout, err)
	}
	truncated := int64(len(data)) > a.MaxBytes
	if truncated {
		data = data[:a.MaxBytes]
	}
	return webResult(cfg, a, resp, data, truncated, redirects)
}

// webError turns a failed request into the error the model sees.
func webError(c *Call, ctx context.Context, u *url.URL, timeout time.Duration, err error) error {
	var ae *webAddrError
	var te *Error
	var dnsErr *net.DNSError
	switch {
	case errors.As(err, &ae):
		return webPrivateError(strings.ToLower(u.Hostname()), ae.ip, ae.why)
	case errors.As(err, &te):
		return te
	case c.Ctx.Err() != nil:
		return c.Ctx.Err()
	case ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded):
		return Errorf(Timeout, "%s did not answer within %s (timeout_seconds)", u.Host, timeout)
	case errors.As(err, &dnsErr):
		return Errorf(NetworkError, "cannot resolve %s: %v", dnsErr.Name, dnsErr.Err)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return Errorf(NetworkError, "fetch %s: %v", u.Redacted(), err)
}

// webResult builds web_fetch's result from the response.
func webResult(cfg *workspace.Config, a webFetchArgs, resp *http.Response, data []byte, truncated bool, redirects []string) (*Result, error) {
	ctype := resp.Header.Get("Content-Type")
	mediaType, _, _ := mime.ParseMediaType(ctype)
	if mediaType == "" && len(data) > 0 {
		mediaType, _, _ = mime.ParseMediaType(http.DetectContentType(data))
	}
	s := map[string]any{
		"url": resp.Request.URL.String(), "status": resp.StatusCode, "status_text": http.StatusText(resp.StatusCode),
		"content_type": ctype, "format": a.Format, "bytes": len(data), "encoding": "utf-8",
	}
	if len(redirects) > 0 {
		s["redirects"] = redirects
	}
	headers := map[string]string{}
	for k, v := range resp.Header {
		headers[k] = strings.Join(v, ", ")
	}
	s["headers"] = headers

	textual := webTextual(mediaType, data)
	var content, title string
	switch {
	case a.Method == "HEAD":
		var b strings.Builder
		for _, k := range slices.Sorted(maps.Keys(headers)) {
			fmt.Fprintf(&b, "%s: %s\n", k, headers[k])
		}
		content = b.String()
	case !textual && a.Format == "raw":
		content = base64.StdEncoding.EncodeToString(data)
		s["encoding"] = "base64"
	case !textual:
		content = fmt.Sprintf("binary content (%s, %d bytes); not shown. format \"raw\" returns it base64-encoded.", mediaType, len(data))
	default:
		text := webDecode(data, ctype)
		if a.Format != "raw" && (mediaType == "text/html" || mediaType == "application/xhtml+xml") {
			conv, t, err := htmltext.Convert(text, resp.Request.URL, a.Format == "markdown")
			if err != nil {
				return nil, Errorf(ExecutionError, "%v", err)
			}
			text, title = conv, t
			if title != "" && a.Format == "markdown" && !strings.HasPrefix(text, "# ") {
				text = "# " + title + "\n\n" + text
			}
		}
		content = text
	}
	bodyCut, textCut, full := truncated, false, len(content)
	if limit := cfg.Limits.MaxOutputBytes; limit > 0 && len(content) > limit {
		if s["encoding"] == "base64" {
			content = content[:limit-limit%4]
		} else {
			content, _ = cutText(content, limit)
			for !utf8.ValidString(content) && len(content) > 0 {
				content = content[:len(content)-1]
			}
		}
		textCut = true
	}
	if title != "" {
		s["title"] = title
	}
	s["content"], s["truncated"] = content, bodyCut || textCut

	out := content
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		out = fmt.Sprintf("HTTP %d %s\n\n", resp.StatusCode, http.StatusText(resp.StatusCode)) + out
	}
	if bodyCut {
		out += fmt.Sprintf("\n[body cut at max_bytes: %d bytes read]\n", len(data))
	}
	if textCut {
		out += fmt.Sprintf("\n[content cut at limits.maxOutputBytes: %d of %d bytes shown]\n", len(content), full)
	}
	return Success(out, s), nil
}

// webTextual reports whether a body is text.
func webTextual(mediaType string, data []byte) bool {
	switch {
	case strings.HasPrefix(mediaType, "text/"),
		strings.HasSuffix(mediaType, "+json"), strings.HasSuffix(mediaType, "+xml"),
		mediaType == "application/json", mediaType == "application/xml", mediaType == "application/javascript",
		mediaType == "application/x-javascript", mediaType == "application/ecmascript", mediaType == "application/x-ndjson",
		mediaType == "application/yaml", mediaType == "application/x-yaml", mediaType == "application/toml",
		mediaType == "application/x-sh", mediaType == "application/sql", mediaType == "application/graphql":
		return true
	case mediaType == "" || mediaType == "application/octet-stream":
		return len(data) == 0 || (utf8.Valid(data) && !strings.ContainsRune(string(data[:min(len(data), 8000)]), 0))
	}
	return false
}

// webDecode decodes a text body to UTF-8 from its declared or detected
// charset.
func webDecode(data []byte, ctype string) string {
	enc, name, _ := charset.DetermineEncoding(data, ctype)
	if name == "utf-8" || enc == nil {
		return strings.ToValidUTF8(string(data), "\uFFFD")
	}
	out, err := enc.NewDecoder().Bytes(data)
	if err != nil {
		return strings.ToValidUTF8(string(data), "\uFFFD")
	}
	return string(out)
}

// cutText keeps the first limit bytes of s, on a line boundary when it can.
func cutText(s string, limit int) (string, bool) {
	if len(s) <= limit {
		return s, false
	}
	cut := s[:limit]
	if i := strings.LastIndexByte(cut, '\n'); i > limit/2 {
		cut = cut[:i+1]
	}
	return cut, true
}
