package redact

import (
	"math"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A rule rewrites a string, replacing what it finds with "[REDACTED:id]".
// Every rule is a linear-time regexp (RE2) plus checks in code.
type rule func(string) string

var ownRules = []rule{privateKeys, urlUserinfo, queryParams, authHeaders, bearer, assignments, mysqlPassword, secretFlags, knownPrefixes, jwts}

// span is a part of a string to replace.
type span struct {
	start, end int
	id         string
}

// replace replaces the spans, which are in order and do not overlap.
func replace(s string, spans []span) string {
	if len(spans) == 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	last := 0
	for _, sp := range spans {
		if sp.start < last || sp.end <= sp.start {
			continue
		}
		b.WriteString(s[last:sp.start])
		b.WriteString("[REDACTED:" + sp.id + "]")
		last = sp.end
	}
	b.WriteString(s[last:])
	return b.String()
}

// redacted reports whether the value at s[i:] is a marker already.
func redacted(s string, i int) bool { return strings.HasPrefix(s[i:], Marker) }

var (
	pemBegin = regexp.MustCompile(`-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY[A-Z ]{0,20}-----`)
	pemEnd   = regexp.MustCompile(`-----END[A-Z0-9 ]{0,40}PRIVATE KEY[A-Z ]{0,20}-----`)
)

// privateKeys replaces the body of PEM private key blocks (RSA, EC, DSA,
// OPENSSH, PGP, PKCS#8, encrypted); a block with no end line (a cut one) is
// replaced to the end of the string.
func privateKeys(s string) string {
	var spans []span
	for _, m := range pemBegin.FindAllStringIndex(s, -1) {
		if len(spans) > 0 && m[0] < spans[len(spans)-1].end {
			continue
		}
		end := len(s)
		if e := pemEnd.FindStringIndex(s[m[1]:]); e != nil {
			end = m[1] + e[0]
		}
		if end > m[1] && !redacted(s, m[1]) {
			spans = append(spans, span{m[1], end, "private-key"})
		}
	}
	return replace(s, spans)
}

// The userinfo of a URL runs to the last @ before the path.
var urlRe = regexp.MustCompile(`(?i)\b[a-z][a-z0-9+.-]*://([^\s/?#'"<>\x60]*)@`)

// urlUserinfo replaces the password of URL userinfo, or the whole userinfo
// when it is one token that looks like a key (https://TOKEN@host).
func urlUserinfo(s string) string {
	if !strings.Contains(s, "://") {
		return s
	}
	var spans []span
	for _, m := range urlRe.FindAllStringSubmatchIndex(s, -1) {
		a, b := m[2], m[3]
		if a == b || redacted(s, a) {
			continue
		}
		info := s[a:b]
		if i := strings.IndexByte(info, ':'); i >= 0 {
			if a+i+1 < b && !redacted(s, a+i+1) {
				spans = append(spans, span{a + i + 1, b, "url-userinfo"})
			}
			continue
		}
		if LooksSecret(info) {
			spans = append(spans, span{a, b, "url-userinfo"})
		}
	}
	return replace(s, spans)
}

// queryRe finds query parameters; the separator may be JSON-escaped
// (\u0026) in code that carries a URL in a string.
var queryRe = regexp.MustCompile(`(?:[?&;]|\\u0026)([A-Za-z0-9_.\-\[\]]+)=([^&#\s"'<>\x60\\]+)`)

// queryParams replaces the values of query parameters named like secrets.
func queryParams(s string) string {
	if !strings.Contains(s, "=") {
		return s
	}
	var spans []span
	for _, m := range queryRe.FindAllStringSubmatchIndex(s, -1) {
		if m[3]-m[2] <= 64 && queryName(s[m[2]:m[3]]) && !redacted(s, m[4]) {
			spans = append(spans, span{m[4], m[5], "query-param"})
		}
	}
	return replace(s, spans)
}

var (
	authRe   = regexp.MustCompile(`(?i)\b(?:proxy-)?authorization["']?[ \t]*[:=][ \t]*["']?(?:(?:bearer|basic|token|digest|negotiate|bot|apikey|sso-key|key|hmac|aws4-hmac-sha256)[ \t]+)?([^\s"',;\x60]+)`)
	bearerRe = regexp.MustCompile(`(?i)\bbearer[ \t]+([A-Za-z0-9\-._~+/]{8,}=*)`)
)

var (
	// authHeaders replaces the credentials of Authorization headers.
	authHeaders = groupRule(authRe, "auth-header", "authorization")
	// bearer replaces a Bearer token wherever it appears.
	bearer = groupRule(bearerRe, "auth-header", "bearer")
)

// groupRule is the rule that replaces group 1 of every match of re, under
// the rule name name, where it is not redacted already. word is a word
// (lower case) every match holds, in any case: a string without it is
// not searched. (Its letters must have no case fold outside ASCII, as k
// and s have, since containsFold folds ASCII only.)
func groupRule(re *regexp.Regexp, name, word string) rule {
	return func(s string) string {
		if !containsFold(s, word) {
			return s
		}
		var spans []span
		for _, m := range re.FindAllStringSubmatchIndex(s, -1) {
			if !redacted(s, m[2]) {
				spans = append(spans, span{m[2], m[3], name})
			}
		}
		return replace(s, spans)
	}
}

// assignments replaces the values assigned to names that look secret: in
// shell commands and env files (export DB_PASSWORD=…), flags
// (--password=…), JSON, YAML and TOML (password: …), and code
// (password = "…", 'password' => '…'). An unquoted value that reads as code
// (a call, a field, a variable reference like $TOKEN) is left alone, and
// so are booleans and short numbers. It scans for the operators (=, :, :=,
// =>) by hand and reads the name backwards from each: one pass, no regexp.
func assignments(s string) string {
	var spans []span
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '=' && c != ':' {
			continue
		}
		opEnd := i + 1
		var next, prev byte
		if i+1 < len(s) {
			next = s[i+1]
		}
		if i > 0 {
			prev = s[i-1]
		}
		switch {
		case c == ':' && next == '=', c == '=' && next == '>':
			opEnd = i + 2
		case c == '=' && next == '=', c == ':' && next == ':', c == ':' && next == '/':
			i++ // a comparison, a scope, a URL
			continue
		case c == '=' && strings.IndexByte("=!<>+-*/%&|^:", prev) >= 0:
			continue // a compound operator or a comparison
		}
		nameEnd, spaced := i, false
		for nameEnd > 0 && (s[nameEnd-1] == ' ' || s[nameEnd-1] == '\t') {
			nameEnd--
			spaced = true
		}
		if nameEnd > 0 && (s[nameEnd-1] == '"' || s[nameEnd-1] == '\'') {
			nameEnd--
			if nameEnd > 0 && s[nameEnd-1] == '\\' {
				nameEnd-- // \"name\": inside a string of code
			}
		}
		nameStart := nameEnd
		for nameStart > 0 && nameEnd-nameStart <= 100 && nameByte(s[nameStart-1]) {
			nameStart--
		}
		for nameStart < nameEnd && !(s[nameStart] == '_' || isLetter(s[nameStart])) {
			nameStart++ // --password: the name begins at a letter
		}
		if nameStart > 0 && s[nameStart-1] == '\\' && nameStart < nameEnd {
			switch s[nameStart] { // an escape in a string of code: \nTOKEN=, \u0026token=
			case 'n', 't', 'r':
				nameStart++
			case 'u':
				nameStart = min(nameStart+5, nameEnd)
			}
		}
		name := s[nameStart:nameEnd]
		if name == "" || nameEnd-nameStart > 100 || !maybeSecretName(name) || !SecretName(name) ||
			strings.Contains(strings.ToLower(name), "authorization") {
			continue // authorization: authHeaders' part
		}
		j := opEnd
		for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
			j++
			spaced = true
		}
		a, b, quoted := value(s, j)
		if a == b || redacted(s, a) {
			continue
		}
		v := s[a:b]
		op := s[i:opEnd]
		if !quoted && (op != "=" || spaced) && codeLike(v) {
			continue
		}
		if trivial(v) || (len(spans) > 0 && a < spans[len(spans)-1].end) {
			continue
		}
		spans = append(spans, span{a, b, "assignment"})
		i = b - 1
	}
	return replace(s, spans)
}

func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

func nameByte(c byte) bool {
	return isLetter(c) || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-'
}

// maybeSecretName is SecretName's cheap first test: one of the words that
// can make a name secret is in it, in any case.
func maybeSecretName(name string) bool {
	for _, w := range []string{"pass", "secret", "token", "key", "auth", "cred", "cookie", "pwd"} {
		if containsFold(name, w) {
			return true
		}
	}
	return false
}

// containsFold reports whether s holds the lower-case ASCII word w in any case.
func containsFold(s, w string) bool {
	for i := 0; i+len(w) <= len(s); i++ {
		j := 0
		for j < len(w) && s[i+j]|0x20 == w[j] {
			j++
		}
		if j == len(w) {
			return true
		}
	}
	return false
}

// value reads the value that starts at s[i:]: a quoted string (the part
// inside the quotes, to the closing quote on the same line, at most 8 KiB),
// or a run up to whitespace or a delimiter.
func value(s string, i int) (start, end int, quoted bool) {
	if i >= len(s) {
		return i, i, false
	}
	if s[i] == '\\' && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\'') {
		// \"value\": a quoted value inside a string of code
		q := s[i+1]
		j := i + 2
		for j < len(s) && j-i < 8<<10 && s[j] != '\n' && !(s[j] == '\\' && j+1 < len(s) && s[j+1] == q) {
			j++
		}
		for j > i+2 && j < len(s) && !utf8.RuneStart(s[j]) {
			j--
		}
		return i + 2, j, true
	}
	if q := s[i]; q == '"' || q == '\'' || q == '`' {
		j := i + 1
		for j < len(s) && j-i < 8<<10 && s[j] != q && s[j] != '\n' {
			if s[j] == '\\' && q != '`' && j+1 < len(s) {
				j++
			}
			j++
		}
		if j > len(s) {
			j = len(s)
		}
		for j > i+1 && j < len(s) && !utf8.RuneStart(s[j]) {
			j-- // stopped by the length limit inside a rune
		}
		return i + 1, j, true
	}
	j := i
	for j < len(s) && !strings.ContainsRune(" \t\r\n\"'`,;&|)}]>", rune(s[j])) {
		if s[j] == '\\' && j+1 < len(s) && strings.IndexByte("ntru\"'", s[j+1]) >= 0 {
			break // an escape sequence ends a value inside a string of code
		}
		j++
	}
	return i, j, false
}

// codeLike reports whether an unquoted value reads as an expression rather
// than a literal: a call, a field or method, a variable reference.
func codeLike(v string) bool {
	if strings.ContainsAny(v, "()[{") || strings.HasPrefix(v, "$") || strings.HasPrefix(v, "%") {
		return true
	}
	if strings.HasPrefix(v, "&") || strings.HasPrefix(v, "*") || strings.HasPrefix(v, "!") {
		return true
	}
	// a.b.c: a selector, unless it is long and mixes digits (a key with dots).
	if strings.Contains(v, ".") && !LooksSecret(v) {
		ident := true
		for _, r := range v {
			if !(r == '.' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)) {
				ident = false
				break
			}
		}
		if ident {
			return true
		}
	}
	return false
}

// trivial reports values that cannot be secrets: empty, booleans, nulls,
// short numbers, placeholders and variable references.
func trivial(v string) bool {
	switch strings.ToLower(v) {
	case "", "true", "false", "null", "nil", "none", "yes", "no", "on", "off", "undefined", "required", "optional":
		return true
	}
	if strings.HasPrefix(v, "$") || strings.HasPrefix(v, "{{") || strings.HasPrefix(v, "%(") {
		return true
	}
	if len(v) <= 5 && strings.Trim(v, "0123456789") == "" {
		return true
	}
	return strings.Trim(v, "*x.<>-_") == ""
}

var flagRe = regexp.MustCompile(`(?:^|[\s;|&(])(--?[A-Za-z][A-Za-z0-9_\-]*)[ \t]+`)

// secretFlags replaces the value after a flag named like a secret
// (--password x, --token x, --api-key x) and the password of -u/--user
// user:password (curl, httpie).
func secretFlags(s string) string {
	if !strings.Contains(s, "-") {
		return s
	}
	var spans []span
	for _, m := range flagRe.FindAllStringSubmatchIndex(s, -1) {
		flag := s[m[2]:m[3]]
		if len(flag) > 64 {
			continue
		}
		a, b, _ := value(s, m[1])
		if a == b || redacted(s, a) || s[a] == '-' {
			continue
		}
		name := strings.TrimLeft(flag, "-")
		switch {
		case flag == "-u" || name == "user" || name == "auth" || name == "proxy-user":
			if i := strings.IndexByte(s[a:b], ':'); i >= 0 && a+i+1 < b {
				spans = append(spans, span{a + i + 1, b, "secret-flag"})
			}
		case len(name) > 1 && SecretName(name) && !trivial(s[a:b]):
			spans = append(spans, span{a, b, "secret-flag"})
		}
	}
	return replace(s, spans)
}

var mysqlRe = regexp.MustCompile(`\b(?:mysql|mysqldump|mysqladmin|mariadb|mariadb-dump)\b[^\n;|&]*?[ \t]-p([^\s'"\x60;|&]+)`)

// mysqlPassword replaces the password glued to -p in MySQL's clients.
func mysqlPassword(s string) string {
	if !strings.Contains(s, "-p") {
		return s
	}
	var spans []span
	for _, m := range mysqlRe.FindAllStringSubmatchIndex(s, -1) {
		if !redacted(s, m[2]) {
			spans = append(spans, span{m[2], m[3], "secret-flag"})
		}
	}
	return replace(s, spans)
}

// Token prefixes of well-known services; what follows them must hold a
// digit, so that prose (sk-learn-…) is not taken for a key.
var prefixRe = regexp.MustCompile(`\b(?:sk-ant-[a-z0-9]{2,8}-|sk-proj-|sk-svcacct-|sk-admin-|sk-|gh[pousr]_|github_pat_|glpat-|gldt-|xox[abposre]-|xapp-|AKIA|ASIA|AGPA|AIza|[sr]k_(?:live|test)_|whsec_|npm_|pypi-|hf_|dop_v1_|doo_v1_|SG\.|shpat_|shpss_|lin_api_|pk_live_)[A-Za-z0-9_\-.=]{16,}`)

// knownPrefixes replaces tokens that begin like a service's keys, whatever
// their length past 16 characters (gitleaks wants the exact shape).
func knownPrefixes(s string) string {
	var spans []span
	for _, m := range prefixRe.FindAllStringIndex(s, -1) {
		if strings.ContainsAny(s[m[0]:m[1]], "0123456789") {
			spans = append(spans, span{m[0], m[1], "known-prefix"})
		}
	}
	return replace(s, spans)
}

var jwtRe = regexp.MustCompile(`\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{4,}\.[A-Za-z0-9_\-]*`)

// jwts replaces JSON Web Tokens (header and claims both base64url JSON).
func jwts(s string) string {
	if !strings.Contains(s, "eyJ") {
		return s
	}
	var spans []span
	for _, m := range jwtRe.FindAllStringIndex(s, -1) {
		spans = append(spans, span{m[0], m[1], "jwt"})
	}
	return replace(s, spans)
}

// words splits a name into lower-case words at _ - . space, at camelCase
// boundaries and between letters and digits (apiKey, X-Auth-Token,
// AWS_SECRET_ACCESS_KEY, oauth2token).
func words(k string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	rs := []rune(k)
	for i, r := range rs {
		switch {
		case r == '_' || r == '-' || r == '.' || r == ' ' || r == '[' || r == ']':
			flush()
		case i > 0 && (unicode.IsUpper(r) && unicode.IsLower(rs[i-1]) || unicode.IsDigit(r) != unicode.IsDigit(rs[i-1])):
			flush() // apiKey, oauth2token
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
	}
	flush()
	return out
}

// Words that name a secret on their own.
var secretWords = map[string]bool{
	"password": true, "passwd": true, "pass": true, "passphrase": true, "secret": true,
	"secrets": true, "token": true, "apikey": true, "apitoken": true, "credential": true,
	"credentials": true, "authorization": true, "cookie": true, "privatekey": true,
	"accesskey": true, "secretkey": true, "clientsecret": true, "auth": true, "pwd": false,
}

// Words before "key" that make it a secret (api key, signing key, …).
var keyQualifiers = map[string]bool{
	"api": true, "access": true, "secret": true, "private": true, "signing": true,
	"encryption": true, "master": true, "auth": true, "client": true, "license": true,
	"service": true, "account": true, "app": true, "ssh": true, "gpg": true, "deploy": true,
	"webhook": true, "shared": true, "session": true, "admin": true, "subscription": true,
}

// Words that say a name is about a secret, not the secret itself
// (token_url, password_file, max_tokens, secret_name).
var descriptorWords = map[string]bool{
	"type": true, "count": true, "limit": true, "max": true, "min": true, "len": true,
	"length": true, "url": true, "uri": true, "endpoint": true, "file": true, "path": true,
	"name": true, "id": true, "expiry": true, "expires": true, "ttl": true, "field": true,
	"kind": true, "header": true, "prompt": true, "hint": true, "policy": true, "env": true,
	"var": true, "ref": true, "dir": true, "format": true, "rotation": true, "manager": true,
	"store": true, "provider": true, "helper": true, "command": true, "cmd": true, "required": true,
}

// SecretName reports whether a name (of a variable, flag, header, key or
// query parameter) names a secret: AWS_SECRET_ACCESS_KEY, db-password,
// apiKey, X-Auth-Token, OPENAI_API_KEY, --token. Names about a secret
// rather than holding one (password_file, token_url, max_tokens) do not.
func SecretName(name string) bool {
	ws := words(name)
	if len(ws) == 0 {
		return false
	}
	secret := false
	for i, w := range ws {
		if descriptorWords[w] {
			return false
		}
		if secretWords[w] || (w == "key" && i > 0 && keyQualifiers[ws[i-1]]) {
			secret = true
		}
		if strings.HasSuffix(w, "password") || strings.HasSuffix(w, "passwd") || strings.HasSuffix(w, "secret") || strings.HasSuffix(w, "apikey") {
			secret = true // dbpassword, clientsecret, myapikey
		}
	}
	if !secret && len(ws) >= 2 && ws[len(ws)-1] == "key" && name == strings.ToUpper(name) {
		secret = true // STRIPE_KEY, MY_SERVICE_KEY: an environment variable
	}
	return secret
}

// queryName reports whether a query parameter carries a credential: any
// SecretName, and the names services use for keys and signatures in URLs.
func queryName(name string) bool {
	switch strings.ToLower(name) {
	case "key", "sig", "signature", "code", "x-amz-signature", "x-amz-credential", "x-amz-security-token",
		"x-goog-signature", "x-goog-credential", "access_token", "refresh_token", "id_token", "client_secret":
		return true
	}
	return SecretName(name)
}

// LooksSecret reports whether a whole value looks like a key: 20 to 512
// characters with no whitespace or slash (a path), letters and digits mixed, and a Shannon
// entropy of at least 4 bits per character, or a run beginning with a
// well-known token prefix.
func LooksSecret(s string) bool {
	if len(s) < 20 || len(s) > 512 || strings.ContainsAny(s, " \t\r\n/\\") {
		return false
	}
	if prefixRe.MatchString(s) && strings.ContainsAny(s, "0123456789") {
		return true
	}
	var letters, digits bool
	counts := map[rune]int{}
	n := 0
	for _, r := range s {
		counts[r]++
		n++
		letters = letters || unicode.IsLetter(r)
		digits = digits || unicode.IsDigit(r)
	}
	if !letters || !digits {
		return false
	}
	var h float64
	for _, c := range counts {
		p := float64(c) / float64(n)
		h -= p * math.Log2(p)
	}
	return h >= 4.0
}
