// Package htmltext turns an HTML document into text a model reads: plain
// text, or Markdown with absolute link and image targets (Convert).
//
// What it promises: the conversion is a pure function of its arguments. It
// runs no script, fetches nothing (links and images are only resolved
// against the base URL, never loaded), reads no file and keeps no state, so
// it is safe to call from any number of goroutines. Content a reader does
// not see (scripts, styles, templates, embedded objects and media, form
// controls, elements marked hidden) is dropped; headings, paragraphs, lists, quotes, code blocks and tables keep
// their shape.
//
// What it does not do: fetch pages, detect or convert character sets (the
// caller gives UTF-8 text), cap sizes (the caller limits the document and
// cuts the result), or sanitise HTML for display.
package htmltext
