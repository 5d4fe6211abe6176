package main

import (
	"fmt"
	"strconv"
	"strings"
)

// A color is a terminal color: the default (fg or bg, by where it is used),
// one of the 256 indexed colors, or an RGB value.
type color struct {
	kind    colorKind
	index   uint8 // kind == indexed
	r, g, b uint8 // kind == rgb
}

type colorKind uint8

const (
	defaultColor colorKind = iota
	indexedColor
	rgbColor
)

// A style is what an SGR sequence sets for the cells that follow it.
type style struct {
	fg, bg                                              color
	bold, dim, italic, underline, reverse, strike, hide bool
}

// A cell is one character on screen with its style.
type cell struct {
	ch string
	st style
}

// A screen is the parsed text of a terminal: one row of cells per line.
type screen struct {
	rows [][]cell
}

// parseScreen reads the output of `tmux capture-pane -e -p`: lines of text
// with SGR sequences (ESC [ ... m). Other CSI sequences and OSC strings (such
// as hyperlinks) are dropped. The style carries over from line to line, as
// tmux leaves it. Rows longer than cols are cut; a screen with more than rows
// lines keeps the first rows.
func parseScreen(text string, cols, rows int) (*screen, error) {
	s := &screen{}
	st := style{}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	for _, line := range lines {
		if len(s.rows) == rows {
			break
		}
		var row []cell
		for i := 0; i < len(line); {
			c := line[i]
			if c == 0x1b {
				n, err := escape(line[i:], &st)
				if err != nil {
					return nil, fmt.Errorf("line %d: %w", len(s.rows)+1, err)
				}
				i += n
				continue
			}
			if c < 0x20 || c == 0x7f {
				i++ // other control characters take no cell
				continue
			}
			r, size := decodeRune(line[i:])
			i += size
			if len(row) < cols {
				row = append(row, cell{ch: r, st: st})
			}
		}
		s.rows = append(s.rows, row)
	}
	return s, nil
}

// decodeRune returns the first UTF-8 character of s and its length in bytes.
func decodeRune(s string) (string, int) {
	for i := range s {
		if i > 0 {
			return s[:i], i
		}
	}
	return s, len(s)
}

// escape applies the escape sequence at the start of s to st and returns its
// length. An unterminated sequence is an error.
func escape(s string, st *style) (int, error) {
	if len(s) < 2 {
		return 0, fmt.Errorf("a lone ESC at the end of a line")
	}
	switch s[1] {
	case '[':
		for j := 2; j < len(s); j++ {
			if s[j] >= 0x40 && s[j] <= 0x7e {
				if s[j] == 'm' {
					sgr(s[2:j], st)
				}
				return j + 1, nil
			}
		}
		return 0, fmt.Errorf("unterminated CSI sequence %q", s)
	case ']':
		for j := 2; j < len(s); j++ {
			if s[j] == 0x07 {
				return j + 1, nil
			}
			if s[j] == 0x1b && j+1 < len(s) && s[j+1] == '\\' {
				return j + 2, nil
			}
		}
		return 0, fmt.Errorf("unterminated OSC string %q", s)
	default:
		return 2, nil // a two-byte escape (ESC 7, ESC =…): no cell
	}
}

// sgr applies the parameters of one SGR sequence ("1;38;5;208") to st.
// Parameters with sub-parameters ("4:3") count by their first part.
func sgr(params string, st *style) {
	if params == "" {
		*st = style{}
		return
	}
	var ps []int
	for _, p := range strings.Split(params, ";") {
		p, _, _ = strings.Cut(p, ":")
		n, err := strconv.Atoi(p)
		if err != nil {
			n = -1 // unknown: ignored below
		}
		ps = append(ps, n)
	}
	// The attributes SGR 1 to 9 turn on and 21 to 29 off (but 21 is a
	// double underline, and 22 turns off both bold and dim).
	attr := [10]*bool{1: &st.bold, 2: &st.dim, 3: &st.italic, 4: &st.underline, 7: &st.reverse, 8: &st.hide, 9: &st.strike}
	for i := 0; i < len(ps); i++ {
		switch p := ps[i]; {
		case p == 0:
			*st = style{}
		case p >= 1 && p <= 9 && attr[p] != nil:
			*attr[p] = true
		case p == 21:
			st.underline = true
		case p == 22:
			st.bold, st.dim = false, false
		case p >= 23 && p <= 29 && attr[p-20] != nil:
			*attr[p-20] = false
		case p >= 30 && p <= 37:
			st.fg = color{kind: indexedColor, index: uint8(p - 30)}
		case p == 39:
			st.fg = color{}
		case p >= 40 && p <= 47:
			st.bg = color{kind: indexedColor, index: uint8(p - 40)}
		case p == 49:
			st.bg = color{}
		case p >= 90 && p <= 97:
			st.fg = color{kind: indexedColor, index: uint8(p - 90 + 8)}
		case p >= 100 && p <= 107:
			st.bg = color{kind: indexedColor, index: uint8(p - 100 + 8)}
		case p == 38 || p == 48 || p == 58:
			c, used := extendedColor(ps[i+1:])
			i += used
			switch p {
			case 38:
				st.fg = c
			case 48:
				st.bg = c
			} // 58: underline color, not drawn
		}
	}
}

// extendedColor reads the parameters after 38/48 ("5;N" or "2;R;G;B") and
// returns the color and how many parameters it used.
func extendedColor(ps []int) (color, int) {
	byteOf := func(n int) uint8 { return uint8(max(0, min(255, n))) }
	switch {
	case len(ps) >= 2 && ps[0] == 5:
		return color{kind: indexedColor, index: byteOf(ps[1])}, 2
	case len(ps) >= 4 && ps[0] == 2:
		return color{kind: rgbColor, r: byteOf(ps[1]), g: byteOf(ps[2]), b: byteOf(ps[3])}, 4
	case len(ps) >= 1:
		return color{}, 1
	}
	return color{}, 0
}

// text is the screen's characters without styles, one line per row, trailing
// spaces removed: what a test asserts on.
func (s *screen) text() string {
	var b strings.Builder
	for _, row := range s.rows {
		var line strings.Builder
		for _, c := range row {
			line.WriteString(c.ch)
		}
		b.WriteString(strings.TrimRight(line.String(), " "))
		b.WriteByte('\n')
	}
	return b.String()
}
