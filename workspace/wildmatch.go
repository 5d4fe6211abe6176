package workspace

import "strings"

// The results of dowild.
const (
	wmMatch = iota
	wmNoMatch
	wmAbortAll
	wmAbortToStarStar
)

// wildmatch is git's wildmatch(); pathname is WM_PATHNAME.
func wildmatch(pattern, text string, pathname bool) bool {
	return dowild(pattern, text, pathname) == wmMatch
}

func dowild(p, text string, pathname bool) int {
	pi, ti := 0, 0
	for ; pi < len(p); pi++ {
		pc := p[pi]
		if ti >= len(text) && pc != '*' {
			return wmAbortAll
		}
		var tc byte
		if ti < len(text) {
			tc = text[ti]
		}
		switch pc {
		case '\\':
			// A literal match with the following character.
			pi++
			if pi >= len(p) {
				return wmNoMatch // a trailing backslash matches nothing
			}
			if text[ti] != p[pi] {
				return wmNoMatch
			}
		case '?':
			if pathname && tc == '/' {
				return wmNoMatch
			}
		case '*':
			matchSlash := !pathname
			pi++
			if pi < len(p) && p[pi] == '*' {
				prev := pi - 2
				for pi < len(p) && p[pi] == '*' {
					pi++
				}
				if !pathname {
					matchSlash = true // without WM_PATHNAME, '*' == '**'
				} else if (prev < 0 || p[prev] == '/') &&
					(pi == len(p) || p[pi] == '/' || (p[pi] == '\\' && pi+1 < len(p) && p[pi+1] == '/')) {
					// "**/" may match nothing: try the rest right here.
					if pi < len(p) && p[pi] == '/' && dowild(p[pi+1:], text[ti:], pathname) == wmMatch {
						return wmMatch
					}
					matchSlash = true
				} else {
					matchSlash = false
				}
			}
			if pi == len(p) {
				// A trailing "**" matches everything; a trailing '*' only
				// when no slash is left.
				if !matchSlash && strings.IndexByte(text[ti:], '/') >= 0 {
					return wmNoMatch
				}
				return wmMatch
			} else if !matchSlash && p[pi] == '/' {
				// One asterisk and a slash: match up to the next directory.
				slash := strings.IndexByte(text[ti:], '/')
				if slash < 0 {
					return wmNoMatch
				}
				ti += slash // the slash is matched by the loop
				break
			}
			for {
				if ti >= len(text) {
					break
				}
				tc = text[ti]
				if !isGlobSpecial(p[pi]) {
					// Skip ahead to the next occurrence of the literal.
					want := p[pi]
					for ti < len(text) && (matchSlash || text[ti] != '/') && text[ti] != want {
						ti++
					}
					if ti >= len(text) || text[ti] != want {
						return wmNoMatch
					}
					tc = text[ti]
				}
				m := dowild(p[pi:], text[ti:], pathname)
				if m != wmNoMatch {
					if !matchSlash || m != wmAbortToStarStar {
						return m
					}
				} else if !matchSlash && tc == '/' {
					return wmAbortToStarStar
				}
				ti++
			}
			return wmAbortAll
		case '[':
			pi++
			if pi >= len(p) {
				return wmAbortAll
			}
			pc = p[pi]
			negated := false
			if pc == '!' || pc == '^' {
				negated = true
				pi++
				if pi >= len(p) {
					return wmAbortAll
				}
				pc = p[pi]
			}
			var prev byte
			matched := false
			first := true
			for first || pc != ']' {
				first = false
				if pi >= len(p) {
					return wmAbortAll
				}
				switch {
				case pc == '\\':
					pi++
					if pi >= len(p) {
						return wmAbortAll
					}
					pc = p[pi]
					if tc == pc {
						matched = true
					}
				case pc == '-' && prev != 0 && pi+1 < len(p) && p[pi+1] != ']':
					pi++
					pc = p[pi]
					if pc == '\\' {
						pi++
						if pi >= len(p) {
							return wmAbortAll
						}
						pc = p[pi]
					}
					if tc <= pc && tc >= prev {
						matched = true
					}
					pc = 0 // the range's end starts no range
				case pc == '[' && pi+1 < len(p) && p[pi+1] == ':':
					start := pi + 2
					end := start
					for end < len(p) && p[end] != ']' {
						end++
					}
					if end >= len(p) {
						return wmAbortAll
					}
					if end-start == 0 || p[end-1] != ':' {
						// Not a POSIX class: a literal '['.
						pc = '['
						if tc == pc {
							matched = true
						}
						break
					}
					ok, known := posixClass(p[start:end-1], tc)
					if !known {
						return wmAbortAll // malformed [:class:]
					}
					if ok {
						matched = true
					}
					pi = end
					pc = 0 // a class starts no range
				default:
					if tc == pc {
						matched = true
					}
				}
				prev = pc
				pi++
				if pi >= len(p) {
					return wmAbortAll
				}
				pc = p[pi]
			}
			if matched == negated || (pathname && tc == '/') {
				return wmNoMatch
			}
		default:
			if tc != pc {
				return wmNoMatch
			}
		}
		ti++
	}
	if ti < len(text) {
		return wmNoMatch
	}
	return wmMatch
}

func isGlobSpecial(c byte) bool {
	return c == '*' || c == '?' || c == '[' || c == '\\'
}

// posixClass reports whether c is in the [:name:] class, and whether the
// name is known.
func posixClass(name string, c byte) (in, known bool) {
	isUpper := c >= 'A' && c <= 'Z'
	isLower := c >= 'a' && c <= 'z'
	isDigit := c >= '0' && c <= '9'
	switch name {
	case "alnum":
		return isUpper || isLower || isDigit, true
	case "alpha":
		return isUpper || isLower, true
	case "blank":
		return c == ' ' || c == '\t', true
	case "cntrl":
		return c < 0x20 || c == 0x7f, true
	case "digit":
		return isDigit, true
	case "graph":
		return c > 0x20 && c < 0x7f, true
	case "lower":
		return isLower, true
	case "print":
		return c >= 0x20 && c < 0x7f, true
	case "punct":
		return c > 0x20 && c < 0x7f && !isUpper && !isLower && !isDigit, true
	case "space":
		return c == ' ' || c == '\t' || c == '\n' || c == '\r', true
	case "upper":
		return isUpper, true
	case "xdigit":
		return isDigit || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'), true
	}
	return false, false
}
