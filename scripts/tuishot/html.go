package main

import (
	"fmt"
	"html"
	"strings"
)

// The terminal's look: a dark theme with the 16 base colors of a common
// terminal palette; colors 16–255 are xterm's cube and grey ramp.
var (
	defaultFG = [3]uint8{0xd4, 0xd4, 0xd4}
	defaultBG = [3]uint8{0x1e, 0x1e, 0x1e}
	base16    = [16][3]uint8{
		{0x00, 0x00, 0x00}, {0xcd, 0x31, 0x31}, {0x0d, 0xbc, 0x79}, {0xe5, 0xe5, 0x10},
		{0x24, 0x72, 0xc8}, {0xbc, 0x3f, 0xbc}, {0x11, 0xa8, 0xcd}, {0xe5, 0xe5, 0xe5},
		{0x66, 0x66, 0x66}, {0xf1, 0x4c, 0x4c}, {0x23, 0xd1, 0x8b}, {0xf5, 0xf5, 0x43},
		{0x3b, 0x8e, 0xea}, {0xd6, 0x70, 0xd6}, {0x29, 0xb8, 0xdb}, {0xff, 0xff, 0xff},
	}
)

// rgb resolves c to its RGB value; def is the default (fg or bg).
func rgb(c color, def [3]uint8) [3]uint8 {
	switch c.kind {
	case rgbColor:
		return [3]uint8{c.r, c.g, c.b}
	case indexedColor:
		i := int(c.index)
		switch {
		case i < 16:
			return base16[i]
		case i < 232:
			i -= 16
			level := func(n int) uint8 {
				if n == 0 {
					return 0
				}
				return uint8(55 + 40*n)
			}
			return [3]uint8{level(i / 36), level(i / 6 % 6), level(i % 6)}
		default:
			g := uint8(8 + 10*(i-232))
			return [3]uint8{g, g, g}
		}
	}
	return def
}

func hex(c [3]uint8) string { return fmt.Sprintf("#%02x%02x%02x", c[0], c[1], c[2]) }

// css is the inline style of a run of cells in st.
func (st style) css() string {
	fg, bg := rgb(st.fg, defaultFG), rgb(st.bg, defaultBG)
	if st.reverse {
		fg, bg = bg, fg
	}
	if st.hide {
		fg = bg
	}
	var b strings.Builder
	fmt.Fprintf(&b, "color:%s;background:%s", hex(fg), hex(bg))
	if st.bold {
		b.WriteString(";font-weight:bold")
	}
	if st.dim {
		b.WriteString(";opacity:.6")
	}
	if st.italic {
		b.WriteString(";font-style:italic")
	}
	switch {
	case st.underline && st.strike:
		b.WriteString(";text-decoration:underline line-through")
	case st.underline:
		b.WriteString(";text-decoration:underline")
	case st.strike:
		b.WriteString(";text-decoration:line-through")
	}
	return b.String()
}

// A page is how a screen is drawn: its size in cells, the font, the title
// bar's text (none when empty) and the cursor cell (none when negative).
type page struct {
	cols, rows int
	fontPx     int    // font size in CSS pixels
	linePx     int    // row height in CSS pixels
	fontDir    string // folder of DejaVuSansMono*.ttf
	title      string
	cursorX    int
	cursorY    int
}

const (
	padPx   = 12
	titlePx = 28
	// advance is DejaVu Sans Mono's advance width per em (1233/2048).
	advance = 1233.0 / 2048.0
)

// size is the page's size in CSS pixels: the cells, the padding and the
// title bar.
func (p page) size() (w, h int) {
	w = int(float64(p.cols)*advance*float64(p.fontPx)+0.999) + 2*padPx
	h = p.rows*p.linePx + 2*padPx
	if p.title != "" {
		h += titlePx
	}
	return w, h
}

// boxDrawing tells whether ch is one of the box-drawing characters
// (U+2500–U+257F), which a terminal draws the full height of a row: the page
// stretches them to close the gaps between rows.
func boxDrawing(ch string) bool {
	r := []rune(ch)
	return len(r) == 1 && r[0] >= 0x2500 && r[0] <= 0x257f
}

// html draws s as an HTML page of exactly p.size(): every row a line of
// spans, every character outside ASCII in a box one cell wide, so a glyph
// taken from a fallback font cannot shift the columns after it.
func (p page) html(s *screen) string {
	w, h := p.size()
	var b strings.Builder
	fmt.Fprintf(&b, `<!doctype html><html><head><meta charset="utf-8"><style>
@font-face{font-family:TermMono;src:url("file://%[1]s/DejaVuSansMono.ttf")}
@font-face{font-family:TermMono;font-weight:bold;src:url("file://%[1]s/DejaVuSansMono-Bold.ttf")}
@font-face{font-family:TermMono;font-style:italic;src:url("file://%[1]s/DejaVuSansMono-Oblique.ttf")}
html,body{margin:0;padding:0;overflow:hidden;background:#2b2b2b;width:%[2]dpx;height:%[3]dpx}
.bar{height:%[4]dpx;font:13px/%[4]dpx sans-serif;color:#bbb;text-align:center;background:#323232;border-bottom:1px solid #111;box-sizing:border-box}
.term{padding:%[5]dpx;background:%[6]s;font-family:TermMono,"DejaVu Sans Mono",monospace;font-size:%[7]dpx;line-height:%[8]dpx;color:%[9]s;height:%[10]dpx}
.r{white-space:pre;height:%[8]dpx}
.r>span{display:inline-block;height:%[8]dpx;vertical-align:top}
.w{display:inline-block;width:1ch;overflow:visible;text-align:center}
.b{transform:scaleY(1.25)}
.cur{outline:1px solid #eee}
</style></head><body>`,
		html.EscapeString(p.fontDir), w, h, titlePx, padPx, hex(defaultBG), p.fontPx, p.linePx,
		hex(defaultFG), p.rows*p.linePx)
	if p.title != "" {
		fmt.Fprintf(&b, `<div class="bar">%s</div>`, html.EscapeString(p.title))
	}
	b.WriteString(`<div class="term">`)
	for y := 0; y < p.rows; y++ {
		var row []cell
		if y < len(s.rows) {
			row = s.rows[y]
		}
		b.WriteString(`<div class="r">`)
		var run strings.Builder
		var runStyle style
		inRun := false
		flush := func() {
			if run.Len() > 0 {
				fmt.Fprintf(&b, `<span style="%s">%s</span>`, runStyle.css(), run.String())
				run.Reset()
			}
		}
		for x := 0; x < p.cols; x++ {
			c := cell{ch: " "}
			if x < len(row) {
				c = row[x]
			}
			st := c.st
			cursor := x == p.cursorX && y == p.cursorY
			if cursor {
				st.reverse = !st.reverse
			}
			if !inRun || st != runStyle || cursor {
				flush()
				runStyle, inRun = st, !cursor
			}
			switch {
			case cursor:
				fmt.Fprintf(&b, `<span class="cur" style="%s">%s</span>`, st.css(), html.EscapeString(c.ch))
			case boxDrawing(c.ch):
				fmt.Fprintf(&run, `<span class="w b">%s</span>`, c.ch)
			case len(c.ch) > 1 || c.ch[0] > 0x7e:
				fmt.Fprintf(&run, `<span class="w">%s</span>`, html.EscapeString(c.ch))
			default:
				run.WriteString(html.EscapeString(c.ch))
			}
		}
		flush()
		b.WriteString("</div>\n")
	}
	b.WriteString("</div></body></html>\n")
	return b.String()
}
