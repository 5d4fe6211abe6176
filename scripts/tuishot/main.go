// Command tuishot renders a terminal screen captured by tmux to a PNG, for
// the pictures of the editors' READMEs that their test suites take
// (scripts/screenshots.sh).
//
//	tmux capture-pane -e -p -N -t SESSION > screen.ans
//	go run ./scripts/tuishot -cols 100 -rows 30 -in screen.ans -png shot.png \
//	    [-title TEXT] [-cursor X,Y] [-text screen.txt] [-html shot.html]
//
// The screen's text (its SGR colors and attributes; other escapes dropped)
// becomes an HTML page of the exact size of the screen in DejaVu Sans Mono,
// which headless Chromium ($CHROMIUM, default /usr/bin/chromium) takes a
// screenshot of. The PNG is then checked: its size must be the page's, and it
// must show more than a couple of colors (a blank page is an error). -text
// writes the screen's plain text, what tests assert on.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "tuishot:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("tuishot", flag.ContinueOnError)
	in := fs.String("in", "", "the captured screen (tmux capture-pane -e -p -N)")
	cols := fs.Int("cols", 80, "the screen's width in cells")
	rows := fs.Int("rows", 24, "the screen's height in cells")
	pngOut := fs.String("png", "", "the PNG to write (empty: none)")
	htmlOut := fs.String("html", "", "also keep the HTML page here")
	textOut := fs.String("text", "", "write the screen's plain text here")
	title := fs.String("title", "", "the title bar's text (empty: no title bar)")
	cursor := fs.String("cursor", "", "the cursor cell X,Y (0-based; empty: none)")
	scale := fs.Int("scale", 2, "device pixels per CSS pixel")
	fontDir := fs.String("fonts", "/usr/share/fonts/truetype/dejavu", "the folder of DejaVuSansMono.ttf")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *in == "" || *cols <= 0 || *rows <= 0 || *scale <= 0 {
		return errors.New("-in, and positive -cols, -rows and -scale, are needed")
	}
	raw, err := os.ReadFile(*in)
	if err != nil {
		return err
	}
	s, err := parseScreen(string(raw), *cols, *rows)
	if err != nil {
		return fmt.Errorf("parse %s: %w", *in, err)
	}
	if *textOut != "" {
		if err := os.WriteFile(*textOut, []byte(s.text()), 0o644); err != nil {
			return err
		}
	}
	p := page{cols: *cols, rows: *rows, fontPx: 14, linePx: 17, fontDir: *fontDir, title: *title,
		cursorX: -1, cursorY: -1}
	if *cursor != "" {
		x, y, ok := strings.Cut(*cursor, ",")
		cx, errx := strconv.Atoi(x)
		cy, erry := strconv.Atoi(y)
		if !ok || errx != nil || erry != nil {
			return fmt.Errorf("-cursor %q: want X,Y", *cursor)
		}
		p.cursorX, p.cursorY = cx, cy
	}
	if *pngOut == "" && *htmlOut == "" {
		return nil
	}
	if _, err := os.Stat(filepath.Join(*fontDir, "DejaVuSansMono.ttf")); err != nil {
		return fmt.Errorf("the font: %w (Debian's fonts-dejavu-core has it)", err)
	}
	page := p.html(s)
	if *htmlOut != "" {
		if err := os.WriteFile(*htmlOut, []byte(page), 0o644); err != nil {
			return err
		}
	}
	if *pngOut == "" {
		return nil
	}
	return screenshot(page, p, *scale, *pngOut)
}

// screenshot has headless Chromium draw page and writes the PNG to out,
// after checking it.
func screenshot(page string, p page, scale int, out string) error {
	chromium := os.Getenv("CHROMIUM")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	tmp, err := os.MkdirTemp("", "tuishot")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	htmlPath := filepath.Join(tmp, "screen.html")
	if err := os.WriteFile(htmlPath, []byte(page), 0o644); err != nil {
		return err
	}
	shot := filepath.Join(tmp, "screen.png")
	w, h := p.size()
	// A loaded machine can make Chromium slow to start: a generous limit.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu",
		"--no-first-run", "--no-default-browser-check", "--hide-scrollbars", "--allow-file-access-from-files",
		"--user-data-dir="+filepath.Join(tmp, "profile"), "--disable-crash-reporter",
		fmt.Sprintf("--force-device-scale-factor=%d", scale), fmt.Sprintf("--window-size=%d,%d", w, h),
		"--screenshot="+shot, "file://"+htmlPath)
	cmd.Env = append(os.Environ(), "HOME="+tmp, "XDG_CONFIG_HOME="+tmp, "XDG_CACHE_HOME="+tmp)
	var outBuf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &outBuf, &outBuf
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w\n%s", chromium, err, outBuf.String())
	}
	data, err := os.ReadFile(shot)
	if err != nil {
		return fmt.Errorf("chromium wrote no screenshot: %w\n%s", err, outBuf.String())
	}
	img, err := checkPNG(data, w*scale, h*scale)
	if err != nil {
		return err
	}
	small, err := compact(img)
	if err != nil {
		return err
	}
	return os.WriteFile(out, small, 0o644)
}

// checkPNG decodes data and fails unless it is a w×h PNG with more than a
// few colors (text drawn, not a blank or failed page).
func checkPNG(data []byte, w, h int) (image.Image, error) {
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("the screenshot is not a PNG: %w", err)
	}
	if b := img.Bounds(); b.Dx() != w || b.Dy() != h {
		return nil, fmt.Errorf("the screenshot is %dx%d, want %dx%d", b.Dx(), b.Dy(), w, h)
	}
	if n := colors(img, 16); n < 16 {
		return nil, fmt.Errorf("the screenshot has only %d colors: nothing was drawn", n)
	}
	return img, nil
}

// colors counts the distinct colors of img, stopping at limit.
func colors(img image.Image, limit int) int {
	seen := map[[4]uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, a := img.At(x, y).RGBA()
			seen[[4]uint32{r, g, bl, a}] = true
			if len(seen) >= limit {
				return len(seen)
			}
		}
	}
	return len(seen)
}
