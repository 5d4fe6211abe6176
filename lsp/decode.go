package lsp

import (
	"bytes"
	"encoding/json"
	"errors"

	"go.lsp.dev/jsonrpc2"
)

// decode turns a body into a message, or says which JSON-RPC error it is.
// A body that is not JSON is -32700 (ParseError). It reads a large body as
// few times as it can: one pass checks and probes, one decodes.
func decode(body []byte) (jsonrpc2.Message, jsonrpc2.Code, string) {
	trimmed := bytes.TrimSpace(body)
	if msg := decodeRequest(trimmed); msg != nil {
		return msg, 0, ""
	}
	if len(trimmed) == 0 || trimmed[0] != '{' {
		if !json.Valid(trimmed) {
			return nil, jsonrpc2.ParseError, notJSON
		}
		return nil, jsonrpc2.InvalidRequest, "invalid request: a message must be a JSON object (batches are not supported)"
	}
	var probe struct {
		JSONRPC string          `json:"jsonrpc"`
		Method  *string         `json:"method"`
		ID      json.RawMessage `json:"id"`
	}
	if err := json.Unmarshal(trimmed, &probe); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, jsonrpc2.ParseError, notJSON
		}
		return nil, jsonrpc2.InvalidRequest, "invalid request: " + err.Error()
	}
	if probe.JSONRPC != "2.0" {
		return nil, jsonrpc2.InvalidRequest, `invalid request: "jsonrpc" must be "2.0"`
	}
	if probe.Method != nil && *probe.Method == "" {
		return nil, jsonrpc2.InvalidRequest, "invalid request: empty method"
	}
	if len(probe.ID) > 0 && !validID(probe.ID) {
		return nil, jsonrpc2.InvalidRequest, "invalid request: id must be a string or a 32-bit integer"
	}
	msg, err := jsonrpc2.DecodeMessage(trimmed)
	if err != nil {
		return nil, jsonrpc2.InvalidRequest, "invalid request: " + err.Error()
	}
	return msg, 0, ""
}

const notJSON = "parse error: the message is not valid JSON"

// decodeRequest decodes the usual request or notification without
// jsonrpc2.DecodeMessage, whose decoder costs a 32 KiB buffer per message:
// a valid JSON object whose members are jsonrpc ("2.0"), method (a string
// without escapes), id (a string or a 32-bit integer; absent for a
// notification) and params (absent, or anything but null), each once and
// spelled so. It returns the message DecodeMessage would (raw params, not
// copied), or nil for anything else, which goes the general way.
func decodeRequest(data []byte) jsonrpc2.Message {
	if !json.Valid(data) {
		return nil
	}
	var version, method, id, params []byte
	ok := eachMember(data, func(name, value []byte) bool {
		var slot *[]byte
		switch string(name) {
		case "jsonrpc":
			slot = &version
		case "method":
			slot = &method
		case "id":
			slot = &id
		case "params":
			slot = &params
		default:
			return false
		}
		if *slot != nil {
			return false // twice
		}
		*slot = value
		return true
	})
	if !ok || string(version) != `"2.0"` || len(method) < 3 || method[0] != '"' || !plainASCII(method[1:len(method)-1]) ||
		string(params) == "null" || string(id) == "null" || id != nil && !validID(id) {
		return nil
	}
	if params == nil {
		return nil // DecodeMessage leaves absent params nil; NewCall would say null
	}
	name := string(method[1 : len(method)-1])
	if id == nil {
		n, err := jsonrpc2.NewNotification(name, json.RawMessage(params))
		if err != nil {
			return nil
		}
		return n
	}
	var rid jsonrpc2.ID
	if rid.UnmarshalJSON(id) != nil {
		return nil
	}
	c, err := jsonrpc2.NewCall(rid, name, json.RawMessage(params))
	if err != nil {
		return nil
	}
	return c
}

// eachMember calls f with the name (as written, between its quotes) and
// the raw value of each member of the JSON object data, in order, while f
// returns true. It checks the object's structure, not its values' contents
// (the caller checks that data is valid JSON). ok is false when data is no
// object or f stopped.
func eachMember(data []byte, f func(name, value []byte) bool) (ok bool) {
	p := &skipper{data: data}
	p.space()
	if !p.eat('{') {
		return false
	}
	p.space()
	for !p.eat('}') {
		start := p.i
		if !p.str() {
			return false
		}
		name := data[start+1 : p.i-1]
		p.space()
		if !p.eat(':') {
			return false
		}
		p.space()
		vstart := p.i
		if !p.value(0) || !f(name, data[vstart:p.i]) {
			return false
		}
		p.space()
		if p.eat(',') {
			p.space()
		}
	}
	return p.rest()
}

// plainASCII reports whether b is printable ASCII with no quote or
// backslash: a string's contents that mean what they spell.
func plainASCII(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// validID reports whether raw is a JSON string or a 32-bit integer, as
// decoding it into either would say; the usual ids (a plain string, a small
// integer) are seen without decoding.
func validID(raw json.RawMessage) bool {
	switch {
	case len(raw) >= 2 && raw[0] == '"' && raw[len(raw)-1] == '"' && plainASCII(raw[1:len(raw)-1]):
		return true
	case len(raw) > 0 && len(raw) <= 9 && (raw[0] != '0' || len(raw) == 1) && allDigits(raw):
		return true // at most 999,999,999, no leading zero
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return true
	}
	var n int32
	return json.Unmarshal(raw, &n) == nil
}

func allDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func isResponse(body []byte) bool {
	var probe struct {
		Method *string         `json:"method"`
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	return json.Unmarshal(body, &probe) == nil && probe.Method == nil && (probe.Result != nil || probe.Error != nil)
}

// rawID returns the message's id as sent when it is a string or number, so
// that the error can name it; else nil (JSON null).
func rawID(body []byte) json.RawMessage {
	var probe struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(body, &probe) != nil || len(probe.ID) == 0 {
		return nil
	}
	switch probe.ID[0] {
	case '"', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return probe.ID
	}
	return nil
}
