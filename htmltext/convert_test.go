package htmltext

import (
	"net/url"
	"testing"
)

func TestConvert(t *testing.T) {
	t.Parallel()
	base, _ := url.Parse("https://example.com/dir/page.html")
	tests := []struct {
		name, html string
		markdown   string
		text       string
	}{
		{"entities and spaces", "<p>a &amp; b\n\n   c&nbsp;d</p>", "a & b c\u00a0d\n", "a & b c\u00a0d\n"},
		{"inline spacing", "<p>x<b>y</b>z <i> w </i>.</p>", "x**y**z *w* .\n", "xyz w .\n"},
		{"relative links", `<a href="../up.html">up</a> <a href="sub/x">x</a> <a href="#top">top</a> <a href="mailto:a@b.c">mail</a>`,
			"[up](https://example.com/up.html) [x](https://example.com/dir/sub/x) top [mail](mailto:a@b.c)\n", "up x top mail\n"},
		{"image link", `<a href="/"><img src="logo.png" alt="Logo"></a>`,
			"[![Logo](https://example.com/dir/logo.png)](https://example.com/)\n", "Logo\n"},
		{"line breaks", "<p>one<br>two<br/>three</p>", "one\ntwo\nthree\n", "one\ntwo\nthree\n"},
		{"hidden", `<div aria-hidden="true">no</div><div style="visibility: hidden">no</div><p>yes</p><template>no</template>`, "yes\n", "yes\n"},
		{"inline code", "<p>run <code>go `test`</code></p>", "run ``go `test```\n", "run go `test`\n"},
		{"definition list", "<dl><dt>term</dt><dd>meaning</dd></dl>", "**term**\n\n  meaning\n", "term\n\n  meaning\n"},
		{"fence in code", "<pre>```\nx\n```</pre>", "````\n```\nx\n```\n````\n", "```\nx\n```\n"},
		{"table pipes", "<table><thead><tr><th>a|b</th></tr></thead><tbody><tr><td>1</td><td>2</td></tr></tbody></table>",
			"| a\\|b |  |\n| --- | --- |\n| 1 | 2 |\n", "a|b |\n1 | 2\n"},
		{"nested quote list", "<blockquote><ul><li>a</li><li>b</li></ul></blockquote>", "> - a\n> - b\n", "  - a\n  - b\n"},
		{"list item paragraphs", "<ol><li><p>first</p><p>more</p></li><li>second</li></ol>", "1. first\n   more\n2. second\n", "1. first\n   more\n2. second\n"},
		{"empty", "<html><body><script>x()</script></body></html>", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			md, _, err := Convert(tt.html, base, true)
			if err != nil {
				t.Fatal(err)
			}
			if md != tt.markdown {
				t.Errorf("markdown %q, want %q", md, tt.markdown)
			}
			text, _, _ := Convert(tt.html, base, false)
			if text != tt.text {
				t.Errorf("text %q, want %q", text, tt.text)
			}
		})
	}
}
