package logs

import (
	"bytes"
	"encoding/json"
	"errors"
)

// jsonParser reads JSON lines.
type jsonParser struct {
	m      resolved
	fields jsonFields
}

// jsonFields is one object's fields, raw.
type jsonFields map[string]json.RawMessage

func (f jsonFields) get(name string) ([]byte, bool) {
	raw, ok := f[name]
	if !ok || string(raw) == "null" {
		return nil, false
	}
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil, false
		}
		return []byte(s), true
	}
	return raw, true
}

var errJSON = errors.New("not a JSON object")

func (p *jsonParser) parse(line []byte, rec *Record) error {
	if len(line) == 0 || line[0] != '{' {
		return errJSON
	}
	clear(p.fields)
	if err := json.Unmarshal(line, &p.fields); err != nil {
		return errJSON
	}
	return p.m.fill(p.fields, rec)
}

// looksJSON reports whether a first line is a JSON object.
func looksJSON(line []byte) bool { return bytes.HasPrefix(line, []byte("{")) }
