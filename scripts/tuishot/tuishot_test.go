package main

import (
	"bytes"
	"image"
	imgcolor "image/color"
	"image/png"
	"strings"
	"testing"
)

func TestParseScreen(t *testing.T) {
	red := color{kind: indexedColor, index: 1}
	tests := []struct {
		name string
		in   string
		cols int
		want [][]cell
	}{
		{"plain", "ab\n", 10, [][]cell{{{ch: "a"}, {ch: "b"}}}},
		{"basic fg and reset", "\x1b[31ma\x1b[0mb", 10,
			[][]cell{{{ch: "a", st: style{fg: red}}, {ch: "b"}}}},
		{"style carries to the next line", "\x1b[1;31ma\nb\x1b[m", 10,
			[][]cell{{{ch: "a", st: style{fg: red, bold: true}}}, {{ch: "b", st: style{fg: red, bold: true}}}}},
		{"256 and rgb", "\x1b[38;5;208;48;2;1;2;3mx", 10,
			[][]cell{{{ch: "x", st: style{fg: color{kind: indexedColor, index: 208}, bg: color{kind: rgbColor, r: 1, g: 2, b: 3}}}}}},
		{"bright and default", "\x1b[91;100ma\x1b[39;49mb", 10,
			[][]cell{{{ch: "a", st: style{fg: color{kind: indexedColor, index: 9}, bg: color{kind: indexedColor, index: 8}}}, {ch: "b"}}}},
		{"attributes on and off", "\x1b[3;4;7ma\x1b[23;24;27mb", 10,
			[][]cell{{{ch: "a", st: style{italic: true, underline: true, reverse: true}}, {ch: "b"}}}},
		{"every attribute on", "\x1b[1;2;3;4;7;8;9ma", 10,
			[][]cell{{{ch: "a", st: style{bold: true, dim: true, italic: true, underline: true, reverse: true, hide: true, strike: true}}}}},
		{"every attribute off", "\x1b[1;2;3;4;7;8;9m\x1b[22;23;24;27;28;29ma", 10, [][]cell{{{ch: "a"}}}},
		{"double underline, and 5, 6, 25, 26 ignored", "\x1b[21;5;6ma\x1b[25;26mb", 10,
			[][]cell{{{ch: "a", st: style{underline: true}}, {ch: "b", st: style{underline: true}}}}},
		{"sub-parameters", "\x1b[4:3ma", 10, [][]cell{{{ch: "a", st: style{underline: true}}}}},
		{"osc hyperlink dropped", "\x1b]8;;http://x\x1b\\a\x1b]8;;\x07", 10, [][]cell{{{ch: "a"}}}},
		{"utf-8 cells", "│·—", 10, [][]cell{{{ch: "│"}, {ch: "·"}, {ch: "—"}}}},
		{"cut at cols", "abcdef", 3, [][]cell{{{ch: "a"}, {ch: "b"}, {ch: "c"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := parseScreen(tt.in, tt.cols, 24)
			if err != nil {
				t.Fatal(err)
			}
			if len(s.rows) != len(tt.want) {
				t.Fatalf("rows = %d, want %d: %+v", len(s.rows), len(tt.want), s.rows)
			}
			for y := range tt.want {
				if len(s.rows[y]) != len(tt.want[y]) {
					t.Fatalf("row %d = %+v, want %+v", y, s.rows[y], tt.want[y])
				}
				for x := range tt.want[y] {
					if s.rows[y][x] != tt.want[y][x] {
						t.Errorf("cell %d,%d = %+v, want %+v", x, y, s.rows[y][x], tt.want[y][x])
					}
				}
			}
		})
	}
}

func TestParseScreenErrors(t *testing.T) {
	for _, in := range []string{"a\x1b", "\x1b[31", "\x1b]8;;http://x"} {
		if _, err := parseScreen(in, 80, 24); err == nil {
			t.Errorf("parseScreen(%q): no error", in)
		}
	}
}

func TestText(t *testing.T) {
	s, err := parseScreen("\x1b[31mhello  \x1b[0m\n\nx\n", 80, 2)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.text(), "hello\n\n"; got != want {
		t.Errorf("text = %q, want %q", got, want)
	}
}

func TestRGB(t *testing.T) {
	tests := []struct {
		c    color
		want [3]uint8
	}{
		{color{}, defaultFG},
		{color{kind: indexedColor, index: 1}, base16[1]},
		{color{kind: indexedColor, index: 16}, [3]uint8{0, 0, 0}},
		{color{kind: indexedColor, index: 196}, [3]uint8{255, 0, 0}},
		{color{kind: indexedColor, index: 231}, [3]uint8{255, 255, 255}},
		{color{kind: indexedColor, index: 232}, [3]uint8{8, 8, 8}},
		{color{kind: indexedColor, index: 255}, [3]uint8{238, 238, 238}},
		{color{kind: rgbColor, r: 1, g: 2, b: 3}, [3]uint8{1, 2, 3}},
	}
	for _, tt := range tests {
		if got := rgb(tt.c, defaultFG); got != tt.want {
			t.Errorf("rgb(%+v) = %v, want %v", tt.c, got, tt.want)
		}
	}
}

func TestHTML(t *testing.T) {
	s, err := parseScreen("\x1b[7mab\x1b[0m<│\nx·", 4, 2)
	if err != nil {
		t.Fatal(err)
	}
	p := page{cols: 4, rows: 2, fontPx: 14, linePx: 17, fontDir: "/f", title: "t & u", cursorX: 0, cursorY: 1}
	h := p.html(s)
	for _, want := range []string{
		`<div class="bar">t &amp; u</div>`,
		`color:#1e1e1e;background:#d4d4d4">ab</span>`, // reverse video
		`&lt;<span class="w b">│</span></span></div>`, // one box per non-ASCII cell
		`<span class="cur" style="color:#1e1e1e;background:#d4d4d4">x</span><span style="color:#d4d4d4;background:#1e1e1e"><span class="w">·</span>  </span>`, // rows padded to cols
		`url("file:///f/DejaVuSansMono.ttf")`,
	} {
		if !strings.Contains(h, want) {
			t.Errorf("html lacks %q:\n%s", want, h)
		}
	}
	if n := strings.Count(h, `<div class="r">`); n != 2 {
		t.Errorf("%d rows, want 2", n)
	}
	if w, hh := p.size(); w != 34+2*padPx || hh != 2*17+2*padPx+titlePx {
		t.Errorf("size = %d,%d", w, hh)
	}
}

func TestCheckPNG(t *testing.T) {
	encode := func(img image.Image) []byte {
		var b bytes.Buffer
		if err := png.Encode(&b, img); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	blank := image.NewRGBA(image.Rect(0, 0, 40, 20))
	drawn := image.NewRGBA(image.Rect(0, 0, 40, 20))
	for x := 0; x < 40; x++ {
		drawn.Set(x, 3, imgcolor.RGBA{uint8(x * 6), 0, 0, 255})
	}
	tests := []struct {
		name string
		data []byte
		w, h int
		ok   bool
	}{
		{"drawn", encode(drawn), 40, 20, true},
		{"blank", encode(blank), 40, 20, false},
		{"wrong size", encode(drawn), 80, 40, false},
		{"not a png", []byte("<html>"), 40, 20, false},
	}
	for _, tt := range tests {
		if _, err := checkPNG(tt.data, tt.w, tt.h); (err == nil) != tt.ok {
			t.Errorf("%s: err = %v", tt.name, err)
		}
	}
}

func TestCompact(t *testing.T) {
	// 300 shades: the 256 most used stay, the rest become their nearest.
	img := image.NewRGBA(image.Rect(0, 0, 300, 4))
	for x := 0; x < 300; x++ {
		for y := 0; y < 4; y++ {
			c := imgcolor.RGBA{uint8(x / 2), uint8(x % 2 * 128), 0, 255}
			if x >= 256 && y > 0 {
				c = imgcolor.RGBA{0, 0, 255, 255} // used often: kept
			}
			img.Set(x, y, c)
		}
	}
	data, err := compact(img)
	if err != nil {
		t.Fatal(err)
	}
	again, err := compact(img)
	if err != nil || !bytes.Equal(data, again) {
		t.Fatalf("compact is not deterministic (err %v)", err)
	}
	got, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	p, ok := got.(*image.Paletted)
	if !ok || len(p.Palette) != 256 {
		t.Fatalf("got %T, want a 256-color paletted image", got)
	}
	if r, g, b, _ := p.At(299, 1).RGBA(); r != 0 || g != 0 || b != 0xffff {
		t.Errorf("a common color changed: %v", p.At(299, 1))
	}
	if c := imgcolor.RGBAModel.Convert(p.At(10, 0)).(imgcolor.RGBA); c != (imgcolor.RGBA{5, 0, 0, 255}) {
		t.Errorf("pixel 10,0 = %v, want {5 0 0 255}", c)
	}
}
