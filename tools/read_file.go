package tools

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/agentls/agentls/workspace"
)

// ReadFile is read_file.
var ReadFile = builtin(Def[readFileArgs]{
	Spec: Spec{
		Name:     "read_file",
		Category: "fs",
		Title:    "Read file",
		Description: "Reads a text file of the workspace and returns its lines numbered like `cat -n` (number, tab, text). " +
			"Reads the editor's unsaved buffer when the file is open. offset is the first line (1-based), limit the number of lines " +
			"(default 2000); very long lines are cut with a marker. Binary files are described, not dumped, unless encoding is base64. " +
			"Read a file before you edit or overwrite it.",
		Aliases:     []string{"readFile", "view"},
		Annotations: Annotations{ReadOnly: true, Approval: "auto"},
		Cacheable:   true,
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["path"],"properties":{
			"path":{"type":"string","description":"file path, relative to the workspace root or absolute inside it"},
			"offset":{"type":"integer","minimum":1,"default":1,"description":"first line to return, 1-based"},
			"limit":{"type":"integer","minimum":1,"maximum":100000,"description":"number of lines to return (default 2000)"},
			"encoding":{"enum":["utf-8","base64"],"default":"utf-8","description":"base64 returns the raw bytes of the whole file"}}}`),
		OutputSchema: json.RawMessage(`{"type":"object","required":["path","total_lines"],"properties":{
			"path":{"type":"string"},"start_line":{"type":"integer"},"end_line":{"type":"integer"},"total_lines":{"type":"integer"},
			"truncated":{"type":"boolean"},"cut_lines":{"type":"array","items":{"type":"integer"}},"binary":{"type":"boolean"},
			"mime_type":{"type":"string"},"size":{"type":"integer"},"encoding":{"type":"string"},"data":{"type":"string"},
			"from_buffer":{"type":"boolean"},"mtime":{"type":"string","format":"date-time"}}}`),
	},
	Execute: readFile,
})

type readFileArgs struct {
	Path     string `json:"path"`
	Offset   int    `json:"offset"`
	Limit    int    `json:"limit"`
	Encoding string `json:"encoding"`
}

func readFile(c *Call, a readFileArgs) (*Result, error) {
	path, rel, err := resolveArg(c, a.Path)
	if err != nil {
		return nil, err
	}
	limits := c.Workspace.Config().Limits
	if a.Limit == 0 {
		a.Limit = limits.ReadLines
	}
	var src io.Reader
	var size int64
	var mtime string
	doc, fromBuffer := c.Workspace.Overlays.Get(path)
	c.dependsOnBuffer(path, fromBuffer, doc.Text)
	if fromBuffer {
		src, size = strings.NewReader(doc.Text), int64(len(doc.Text))
	} else {
		// Opened beneath the workspace's roots, then checked on the open
		// file: no race can put another file between the two.
		f, err := c.Workspace.Open(path)
		if err != nil {
			return nil, fileError(rel, err)
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			return nil, fileError(rel, err)
		}
		if _, err := checkRegular(rel, fi); err != nil {
			return nil, err
		}
		c.dependsOnFile(path, fi)
		src, size, mtime = f, fi.Size(), formatMtime(fi.ModTime())
	}
	br := bufio.NewReaderSize(src, 64<<10)
	head, _ := br.Peek(8000)
	binary := bytes.IndexByte(head, 0) >= 0
	s := map[string]any{"path": rel, "size": size, "from_buffer": fromBuffer}
	if mtime != "" {
		s["mtime"] = mtime
	}

	if a.Encoding == "base64" {
		if size > int64(limits.MaxFileBytes) {
			return nil, Errorf(TooLarge, "%s is %d bytes; base64 reads at most %d (limits.maxFileBytes)", rel, size, limits.MaxFileBytes)
		}
		data, err := io.ReadAll(br)
		if err != nil {
			return nil, fileError(rel, err)
		}
		c.recordRead(path, readRecordOf(string(data)))
		enc := base64.StdEncoding.EncodeToString(data)
		s["encoding"], s["data"], s["binary"], s["total_lines"] = "base64", enc, binary, 0
		s["mime_type"] = http.DetectContentType(head)
		return Success(enc, s), nil
	}
	if binary {
		mime := http.DetectContentType(head)
		s["binary"], s["mime_type"], s["total_lines"] = true, mime, 0
		return Success(fmt.Sprintf("%s is a binary file (%s, %d bytes); not shown. Use encoding \"base64\" to read its bytes.", rel, mime, size), s), nil
	}

	h := sha256.New()
	var whole strings.Builder // the text, kept when small, to say later what changed
	keep := size <= maxRememberedText
	var out strings.Builder
	var cut []int
	line, start, end := 0, a.Offset, 0
	for {
		if err := c.Ctx.Err(); err != nil {
			return nil, err
		}
		text, err := br.ReadString('\n')
		if len(text) > 0 {
			h.Write([]byte(text))
			if keep {
				whole.WriteString(text)
			}
			line++
			if line >= start && line < start+a.Limit {
				t := strings.TrimRight(text, "\r\n")
				if len(t) > limits.MaxLineLength {
					t = workspace.CutLine(t, limits.MaxLineLength)
					cut = append(cut, line)
				}
				fmt.Fprintf(&out, "%6d\t%s\n", line, t)
				end = line
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fileError(rel, err)
		}
	}
	rec := readRecord{Hash: hex.EncodeToString(h.Sum(nil))}
	if keep {
		t := whole.String()
		rec.Text = &t
	}
	c.recordRead(path, rec)
	total := line
	s["total_lines"], s["encoding"] = total, "utf-8"
	if end == 0 {
		s["start_line"], s["end_line"], s["truncated"] = 0, 0, false
		if total == 0 {
			return Success(fmt.Sprintf("%s is empty.", rel), s), nil
		}
		return nil, Errorf(InvalidParams, "offset %d is past the end of %s, which has %d lines", start, rel, total).
			WithDetails(map[string]any{"total_lines": total})
	}
	truncated := end < total
	s["start_line"], s["end_line"], s["truncated"] = start, end, truncated
	if len(cut) > 0 {
		s["cut_lines"] = cut
	}
	content := out.String()
	if truncated || start > 1 {
		content += fmt.Sprintf("(lines %d-%d of %d", start, end, total)
		if truncated {
			content += fmt.Sprintf("; continue with offset %d", end+1)
		}
		content += ")\n"
	}
	return Success(content, s), nil
}
