package htmltext

import (
	"fmt"
	"iter"
	"net/url"
	"regexp"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Convert turns an HTML document into readable text, or Markdown when
// markdown is set: scripts, styles and hidden elements are dropped;
// headings, paragraphs, lists, quotes, code blocks and tables keep their
// shape; in Markdown, links and images keep their (absolute) targets. It
// also returns the document's title.
func Convert(doc string, base *url.URL, markdown bool) (text, title string, err error) {
	root, err := html.Parse(strings.NewReader(doc))
	if err != nil {
		return "", "", fmt.Errorf("parse html: %w", err)
	}
	h := &htmlConv{md: markdown, base: base}
	title = strings.TrimSpace(Collapse(h.findTitle(root)))
	body := root
	if b := htmlFind(root, atom.Body); b != nil {
		body = b
	}
	out := strings.Join(h.blocks(body), "\n\n")
	out = htmlManyNewlines.ReplaceAllString(out, "\n\n")
	out = strings.TrimRight(strings.TrimLeft(out, "\n"), " \t\n")
	if out == "" {
		return "", title, nil
	}
	return out + "\n", title, nil
}

var (
	htmlManyNewlines = regexp.MustCompile(`\n{3,}`)
	htmlSpaceRun     = regexp.MustCompile(`[ \t\r\n\f]+`)
)

// htmlConv holds the settings of one conversion.
type htmlConv struct {
	md   bool
	base *url.URL
}

// htmlSkipped are elements whose content is never text for a reader.
var htmlSkipped = map[atom.Atom]bool{
	atom.Script: true, atom.Style: true, atom.Noscript: true, atom.Template: true, atom.Svg: true,
	atom.Head: true, atom.Iframe: true, atom.Object: true, atom.Embed: true, atom.Canvas: true,
	atom.Link: true, atom.Meta: true, atom.Select: true, atom.Input: true, atom.Textarea: true,
	atom.Math: true, atom.Audio: true, atom.Video: true, atom.Map: true,
}

// htmlBlocks are the elements that start a block of their own.
var htmlBlocks = map[atom.Atom]bool{
	atom.P: true, atom.Div: true, atom.Section: true, atom.Article: true, atom.Main: true, atom.Header: true,
	atom.Footer: true, atom.Nav: true, atom.Aside: true, atom.Figure: true, atom.Figcaption: true,
	atom.Form: true, atom.Fieldset: true, atom.Details: true, atom.Summary: true, atom.Address: true,
	atom.H1: true, atom.H2: true, atom.H3: true, atom.H4: true, atom.H5: true, atom.H6: true,
	atom.Ul: true, atom.Ol: true, atom.Li: true, atom.Dl: true, atom.Dt: true, atom.Dd: true,
	atom.Pre: true, atom.Blockquote: true, atom.Table: true, atom.Hr: true, atom.Body: true, atom.Html: true,
	atom.Center: true, atom.Hgroup: true, atom.Menu: true, atom.Caption: true,
}

func htmlFind(n *html.Node, a atom.Atom) *html.Node {
	if n.Type == html.ElementNode && n.DataAtom == a {
		return n
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if f := htmlFind(c, a); f != nil {
			return f
		}
	}
	return nil
}

func (h *htmlConv) findTitle(root *html.Node) string {
	t := htmlFind(root, atom.Title)
	if t == nil {
		return ""
	}
	return htmlRawText(t)
}

// htmlShown yields the children of n a reader sees: text, and the
// elements that are neither skipped nor hidden.
func htmlShown(n *html.Node) iter.Seq[*html.Node] {
	return func(yield func(*html.Node) bool) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			switch {
			case c.Type == html.TextNode:
			case c.Type != html.ElementNode || htmlSkipped[c.DataAtom] || htmlHidden(c):
				continue
			}
			if !yield(c) {
				return
			}
		}
	}
}

// htmlHidden reports whether an element is not rendered.
func htmlHidden(n *html.Node) bool {
	for _, a := range n.Attr {
		switch strings.ToLower(a.Key) {
		case "hidden":
			return true
		case "aria-hidden":
			if strings.EqualFold(a.Val, "true") {
				return true
			}
		case "style":
			s := strings.ReplaceAll(strings.ToLower(a.Val), " ", "")
			if strings.Contains(s, "display:none") || strings.Contains(s, "visibility:hidden") {
				return true
			}
		}
	}
	return false
}

func htmlAttr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if strings.EqualFold(a.Key, key) {
			return a.Val
		}
	}
	return ""
}

// htmlRawText is the text below n as it is, whitespace kept.
func htmlRawText(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		if n.Type == html.ElementNode && n.DataAtom == atom.Br {
			b.WriteString("\n")
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

// Collapse replaces each run of HTML white space (space, tab, CR, LF, form
// feed) in s with one space.
func Collapse(s string) string { return htmlSpaceRun.ReplaceAllString(s, " ") }

// blocks renders the children of n as a list of blocks.
func (h *htmlConv) blocks(n *html.Node) []string {
	var out []string
	var para strings.Builder
	flush := func() {
		if p := htmlCleanInline(para.String()); p != "" {
			out = append(out, p)
		}
		para.Reset()
	}
	for c := range htmlShown(n) {
		switch {
		case c.Type == html.TextNode:
			para.WriteString(Collapse(c.Data))
		case !htmlBlocks[c.DataAtom]:
			para.WriteString(h.inline(c))
		default:
			flush()
			if b := h.block(c); strings.TrimSpace(b) != "" {
				out = append(out, b)
			}
		}
	}
	flush()
	return out
}

// htmlCleanInline trims a paragraph's lines and collapses their spaces.
func htmlCleanInline(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSpace(Collapse(l))
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

// block renders one block element.
func (h *htmlConv) block(n *html.Node) string {
	switch n.DataAtom {
	case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		t := htmlCleanInline(strings.ReplaceAll(h.inlineChildren(n), "\n", " "))
		if t == "" {
			return ""
		}
		if h.md {
			level := int(n.Data[1] - '0')
			return strings.Repeat("#", level) + " " + t
		}
		return t
	case atom.Ul, atom.Ol, atom.Menu:
		return h.list(n)
	case atom.Li:
		return h.listItem(n, "- ")
	case atom.Pre:
		code := strings.Trim(htmlRawText(n), "\n")
		if !h.md {
			return code
		}
		lang := ""
		if c := htmlFind(n, atom.Code); c != nil {
			for _, cl := range strings.Fields(htmlAttr(c, "class")) {
				if l, ok := strings.CutPrefix(cl, "language-"); ok {
					lang = l
				}
			}
		}
		fence := "```"
		for strings.Contains(code, fence) {
			fence += "`"
		}
		return fence + lang + "\n" + code + "\n" + fence
	case atom.Blockquote:
		inner := strings.Join(h.blocks(n), "\n\n")
		prefix := "> "
		if !h.md {
			prefix = "  "
		}
		return htmlPrefixLines(inner, prefix, prefix)
	case atom.Table:
		return h.table(n)
	case atom.Hr:
		return "---"
	case atom.Dt:
		t := htmlCleanInline(h.inlineChildren(n))
		if h.md && t != "" {
			return "**" + t + "**"
		}
		return t
	case atom.Dd:
		return htmlPrefixLines(strings.Join(h.blocks(n), "\n\n"), "  ", "  ")
	}
	return strings.Join(h.blocks(n), "\n\n")
}

// list renders ul or ol.
func (h *htmlConv) list(n *html.Node) string {
	ordered := n.DataAtom == atom.Ol
	num := 1
	var items []string
	for c := range htmlShown(n) {
		if c.Type != html.ElementNode {
			continue
		}
		marker := "- "
		if ordered {
			marker = fmt.Sprintf("%d. ", num)
			num++
		}
		var item string
		if c.DataAtom == atom.Li {
			item = h.listItem(c, marker)
		} else if b := h.block(c); strings.TrimSpace(b) != "" {
			item = htmlPrefixLines(b, marker, strings.Repeat(" ", len(marker)))
		}
		if item != "" {
			items = append(items, item)
		}
	}
	return strings.Join(items, "\n")
}

// listItem renders li with its marker; nested blocks are indented under it.
func (h *htmlConv) listItem(n *html.Node, marker string) string {
	inner := strings.Join(h.blocks(n), "\n")
	if strings.TrimSpace(inner) == "" {
		return ""
	}
	return htmlPrefixLines(inner, marker, strings.Repeat(" ", len(marker)))
}

// htmlPrefixLines puts first before the first line and rest before the others.
func htmlPrefixLines(s, first, rest string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		p := rest
		if i == 0 {
			p = first
		}
		if l == "" {
			lines[i] = strings.TrimRight(p, " ")
		} else {
			lines[i] = p + l
		}
	}
	return strings.Join(lines, "\n")
}

// table renders a table as Markdown rows (text: cells joined by " | ").
func (h *htmlConv) table(n *html.Node) string {
	var rows [][]string
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type != html.ElementNode || htmlHidden(c) {
				continue
			}
			switch c.DataAtom {
			case atom.Tr:
				var cells []string
				for td := c.FirstChild; td != nil; td = td.NextSibling {
					if td.Type == html.ElementNode && (td.DataAtom == atom.Td || td.DataAtom == atom.Th) {
						cell := htmlCleanInline(strings.Join(h.blocks(td), " "))
						cell = strings.ReplaceAll(cell, "\n", " ")
						if h.md {
							cell = strings.ReplaceAll(cell, "|", `\|`)
						}
						cells = append(cells, cell)
					}
				}
				if len(cells) > 0 {
					rows = append(rows, cells)
				}
			case atom.Thead, atom.Tbody, atom.Tfoot:
				walk(c)
			}
		}
	}
	walk(n)
	if len(rows) == 0 {
		return ""
	}
	width := 0
	for _, r := range rows {
		width = max(width, len(r))
	}
	var b strings.Builder
	for i, r := range rows {
		for len(r) < width {
			r = append(r, "")
		}
		if h.md {
			b.WriteString("| " + strings.Join(r, " | ") + " |\n")
			if i == 0 {
				b.WriteString("|" + strings.Repeat(" --- |", width) + "\n")
			}
		} else {
			b.WriteString(strings.TrimRight(strings.Join(r, " | "), " ") + "\n")
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// inlineChildren renders the children of n as inline text.
func (h *htmlConv) inlineChildren(n *html.Node) string {
	var b strings.Builder
	for c := range htmlShown(n) {
		switch {
		case c.Type == html.TextNode:
			b.WriteString(Collapse(c.Data))
		case htmlBlocks[c.DataAtom]:
			b.WriteString(" " + strings.Join(h.blocks(c), " ") + " ")
		default:
			b.WriteString(h.inline(c))
		}
	}
	return b.String()
}

// inline renders an inline element.
func (h *htmlConv) inline(n *html.Node) string {
	switch n.DataAtom {
	case atom.Br:
		return "\n"
	case atom.Img:
		alt := strings.TrimSpace(Collapse(htmlAttr(n, "alt")))
		if !h.md {
			return alt
		}
		src := h.resolve(htmlAttr(n, "src"))
		if src == "" {
			return alt
		}
		return "![" + alt + "](" + src + ")"
	case atom.Code, atom.Kbd, atom.Samp, atom.Tt:
		t := Collapse(htmlRawText(n))
		if !h.md || strings.TrimSpace(t) == "" {
			return t
		}
		tick := "`"
		for strings.Contains(t, tick) {
			tick += "`"
		}
		return tick + t + tick
	}
	inner := h.inlineChildren(n)
	if !h.md {
		return inner
	}
	// Keep the spaces around the marked text outside the markers.
	core := strings.TrimSpace(inner)
	if core == "" {
		return inner
	}
	lead := inner[:strings.Index(inner, core)]
	trail := inner[len(lead)+len(core):]
	switch n.DataAtom {
	case atom.A:
		href := h.resolve(htmlAttr(n, "href"))
		if href == "" {
			return inner
		}
		return lead + "[" + strings.ReplaceAll(core, "\n", " ") + "](" + href + ")" + trail
	case atom.Strong, atom.B:
		return lead + "**" + core + "**" + trail
	case atom.Em, atom.I:
		return lead + "*" + core + "*" + trail
	case atom.Del, atom.S, atom.Strike:
		return lead + "~~" + core + "~~" + trail
	}
	return inner
}

// resolve makes a link absolute against the page's URL; it returns "" for
// links that lead nowhere useful (javascript:, fragments of the page).
func (h *htmlConv) resolve(ref string) string {
	ref = strings.TrimSpace(ref)
	if ref == "" || strings.HasPrefix(ref, "#") {
		return ""
	}
	u, err := url.Parse(ref)
	if err != nil {
		return ""
	}
	if h.base != nil {
		u = h.base.ResolveReference(u)
	}
	switch u.Scheme {
	case "http", "https", "mailto", "ftp", "":
	default:
		return "" // javascript:, data: and the like
	}
	s := u.String()
	return strings.NewReplacer(" ", "%20", "(", "%28", ")", "%29").Replace(s)
}
