package rpcapi

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"sort"
	"testing"
)

type example struct {
	Perm   string
	Params []json.RawMessage
	Result json.RawMessage
}

// TestLotusDocumentationExamples decodes every example of Lotus's generated worker API
// documentation (and the miner methods snarkd calls) into snarkd's parameter and result types
// and encodes them again: the JSON must come back byte for byte, field order included. It also
// checks that snarkd has every worker method, with Lotus's permission.
func TestLotusDocumentationExamples(t *testing.T) {
	raw, err := os.ReadFile("testdata/lotus_api_examples.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Worker map[string]example
		Miner  map[string]example
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Worker) < 37 {
		t.Fatalf("only %d worker examples", len(doc.Worker))
	}
	check := func(t *testing.T, methods reflect.Type, name string, ex example) {
		f, ok := methods.FieldByName(name)
		if !ok {
			t.Fatalf("no method %s", name)
		}
		if got := f.Tag.Get("perm"); got != ex.Perm {
			t.Errorf("perm %s, Lotus has %s", got, ex.Perm)
		}
		ft := f.Type
		if len(ex.Params) != ft.NumIn()-1 {
			t.Fatalf("%d params, Lotus sends %d", ft.NumIn()-1, len(ex.Params))
		}
		for i, p := range ex.Params {
			roundTrip(t, ft.In(i+1), p, "param")
		}
		if ft.NumOut() == 2 {
			roundTrip(t, ft.Out(0), ex.Result, "result")
		}
	}
	names := func(m map[string]example) []string {
		var out []string
		for k := range m {
			out = append(out, k)
		}
		sort.Strings(out)
		return out
	}
	for _, name := range names(doc.Worker) {
		t.Run("Worker."+name, func(t *testing.T) { check(t, reflect.TypeOf(WorkerMethods{}), name, doc.Worker[name]) })
	}
	for _, name := range names(doc.Miner) {
		t.Run("Miner."+name, func(t *testing.T) { check(t, reflect.TypeOf(MinerMethods{}), name, doc.Miner[name]) })
	}
}

func roundTrip(t *testing.T, typ reflect.Type, in json.RawMessage, what string) {
	t.Helper()
	v := reflect.New(typ)
	if err := json.Unmarshal(in, v.Interface()); err != nil {
		t.Fatalf("%s %s: decoding %s: %v", what, typ, in, err)
	}
	out, err := json.Marshal(v.Elem().Interface())
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := json.Compact(&want, in); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, want.Bytes()) {
		t.Errorf("%s %s:\n got %s\nwant %s", what, typ, out, want.Bytes())
	}
}
