package c1

import (
	"encoding/json"
	"reflect"
	"sort"
	"strings"
	"sync"
)

// UnknownFields names the object keys of b, the JSON of a C1 output that Decode accepted, that
// no field of the C1 output takes: the fields a decode ignored. Each is a path of keys, "[]"
// standing for any array element and "*" for any map value
// ("vanilla_proofs.*[][].comm_d_proofs.extra"); each path is listed once, sorted. Keys are
// matched as encoding/json matches them (exactly, else case-insensitively).
func UnknownFields(b []byte) []string {
	return unknownFields(b, schemaFor(reflect.TypeFor[Output]()))
}

// UnknownCommit2InFields names the keys of b, a Lotus Commit2In envelope that DecodeCommit2In
// accepted, that are none of SectorNum, Phase1Out and SectorSize. The C1 output inside is not
// looked at (UnknownFields of its Phase1Out does that).
func UnknownCommit2InFields(b []byte) []string {
	return unknownFields(b, schemaFor(reflect.TypeFor[Commit2In]()))
}

// shape is what a JSON value is expected to be: an object with named fields, a map, an array,
// or a scalar (nil fields, map and elem).
type shape struct {
	fields map[string]*shape // an object's fields, by JSON name
	mapOf  *shape            // a map's values
	elem   *shape            // an array's elements
}

var (
	shapesMu sync.Mutex
	shapes   = map[reflect.Type]*shape{}
)

// schemaFor derives the shape of t from its JSON encoding (json tags), once per type.
func schemaFor(t reflect.Type) *shape {
	shapesMu.Lock()
	defer shapesMu.Unlock()
	return shapeOf(t)
}

var (
	domainType  = reflect.TypeFor[Domain]()
	rawType     = reflect.TypeFor[json.RawMessage]()
	merkleType  = reflect.TypeFor[MerkleProof]()
	bytesType   = reflect.TypeFor[[]byte]()
	scalarShape = &shape{}
)

// shapeOf is schemaFor without the lock; callers hold shapesMu.
func shapeOf(t reflect.Type) *shape {
	if s, ok := shapes[t]; ok {
		return s
	}
	switch t {
	case domainType, rawType, bytesType:
		return scalarShape
	case merkleType:
		// MerkleProof reads its serde form through the wire types.
		return shapeOf(reflect.TypeFor[merkleWire]())
	}
	switch t.Kind() {
	case reflect.Pointer:
		return shapeOf(t.Elem())
	case reflect.Slice, reflect.Array:
		s := &shape{}
		shapes[t] = s
		s.elem = shapeOf(t.Elem())
		return s
	case reflect.Map:
		s := &shape{}
		shapes[t] = s
		s.mapOf = shapeOf(t.Elem())
		return s
	case reflect.Struct:
		s := &shape{fields: map[string]*shape{}}
		shapes[t] = s
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			s.fields[name] = shapeOf(f.Type)
		}
		return s
	}
	return scalarShape
}

// unknownFields walks b (valid JSON: it was decoded already) along s and lists the keys s
// does not know.
func unknownFields(b []byte, s *shape) []string {
	w := walker{b: b, seen: map[string]bool{}}
	w.value(s, "")
	out := make([]string, 0, len(w.seen))
	for k := range w.seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// walker scans JSON bytes without building values: a C1 output is tens of megabytes, and only
// its keys matter here. It assumes valid JSON and stops quietly at anything else.
type walker struct {
	b    []byte
	i    int
	seen map[string]bool
}

func (w *walker) space() {
	for w.i < len(w.b) {
		switch w.b[w.i] {
		case ' ', '\t', '\r', '\n':
			w.i++
		default:
			return
		}
	}
}

// value reads one value expected to have shape s (nil: anything, only skipped).
func (w *walker) value(s *shape, path string) {
	w.space()
	if w.i >= len(w.b) {
		return
	}
	switch w.b[w.i] {
	case '{':
		w.i++
		for {
			w.space()
			if w.i >= len(w.b) {
				return
			}
			if w.b[w.i] == '}' {
				w.i++
				return
			}
			if w.b[w.i] == ',' {
				w.i++
				continue
			}
			key, ok := w.str()
			if !ok {
				return
			}
			w.space()
			if w.i >= len(w.b) || w.b[w.i] != ':' {
				return
			}
			w.i++
			var next *shape
			var sub string
			switch {
			case s != nil && s.mapOf != nil:
				next, sub = s.mapOf, path+".*"
			case s != nil && s.fields != nil:
				sub = path + "." + key
				if next = field(s.fields, key); next == nil {
					w.seen[strings.TrimPrefix(sub, ".")] = true
				}
			default:
				// Inside an unknown field nothing more is reported: no path to build.
			}
			w.value(next, sub)
		}
	case '[':
		w.i++
		var elem *shape
		if s != nil {
			elem = s.elem
		}
		elemPath := path + "[]" // once per array: a C1 output's arrays hold millions of numbers
		for {
			w.space()
			if w.i >= len(w.b) {
				return
			}
			switch w.b[w.i] {
			case ']':
				w.i++
				return
			case ',':
				w.i++
				continue
			}
			start := w.i
			w.value(elem, elemPath)
			if w.i == start {
				return
			}
		}
	case '"':
		w.str()
	default:
		for w.i < len(w.b) {
			switch w.b[w.i] {
			case ',', '}', ']', ' ', '\t', '\r', '\n':
				return
			}
			w.i++
		}
	}
}

// str reads a string and returns its text.
func (w *walker) str() (string, bool) {
	if w.i >= len(w.b) || w.b[w.i] != '"' {
		return "", false
	}
	start := w.i
	escaped := false
	for w.i++; w.i < len(w.b); w.i++ {
		switch w.b[w.i] {
		case '\\':
			escaped = true
			w.i++
		case '"':
			w.i++
			raw := w.b[start:w.i]
			if !escaped {
				return string(raw[1 : len(raw)-1]), true
			}
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				return "", false
			}
			return s, true
		}
	}
	return "", false
}

// field finds key among fields as encoding/json does: exactly, else ignoring case.
func field(fields map[string]*shape, key string) *shape {
	if s, ok := fields[key]; ok {
		return s
	}
	for name, s := range fields {
		if strings.EqualFold(name, key) {
			return s
		}
	}
	return nil
}
