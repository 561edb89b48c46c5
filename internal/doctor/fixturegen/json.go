package fixturegen

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// obj is a JSON object that keeps its keys in order: the NVML fixtures are
// the nvidia driver's Raw JSON with a few fields changed, and a changed
// field stays where it was, as in the file it came from.
type obj struct {
	keys []string
	vals map[string]any
}

// o builds an object from key, value pairs.
func o(kv ...any) *obj {
	x := &obj{vals: map[string]any{}}
	for i := 0; i+1 < len(kv); i += 2 {
		x.set(kv[i].(string), kv[i+1])
	}
	return x
}

// answer is one NVML answer as Raw records it: the value and return code 0.
func answer(v any) *obj { return o("value", v, "ret", 0) }

func (x *obj) set(k string, v any) {
	if _, ok := x.vals[k]; !ok {
		x.keys = append(x.keys, k)
	}
	x.vals[k] = v
}

func (x *obj) get(k string) any { return x.vals[k] }

func (x *obj) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range x.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, err := encode(k)
		if err != nil {
			return nil, err
		}
		b.Write(kb)
		b.WriteByte(':')
		vb, err := encode(x.vals[k])
		if err != nil {
			return nil, err
		}
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// clone copies a decoded JSON value deeply.
func clone(v any) any {
	switch x := v.(type) {
	case *obj:
		c := &obj{keys: append([]string(nil), x.keys...), vals: map[string]any{}}
		for k, v := range x.vals {
			c.vals[k] = clone(v)
		}
		return c
	case []any:
		c := make([]any, len(x))
		for i, v := range x {
			c[i] = clone(v)
		}
		return c
	}
	return v
}

// decodeOrdered reads one JSON value, objects as *obj and numbers as
// json.Number, so writing it back changes nothing but the indentation.
func decodeOrdered(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("trailing data after the JSON value")
	}
	return v, nil
}

func decodeValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			x := o()
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				x.set(kt.(string), v)
			}
			_, err := dec.Token()
			return x, err
		case '[':
			list := []any{}
			for dec.More() {
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				list = append(list, v)
			}
			_, err := dec.Token()
			return list, err
		}
	}
	return tok, nil
}

// encode is json.Marshal without HTML escaping.
func encode(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSpace(b.Bytes()), nil
}

// marshal writes v as the fixtures are written: one-space indentation, no
// HTML escaping, a final newline.
func marshal(v any) ([]byte, error) {
	compact, err := encode(v)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, compact, "", " "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}
