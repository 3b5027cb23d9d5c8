package c1_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/filecoin-project/go-state-types/abi"

	"github.com/snarkd/snarkd/filecoin/c1"
	"github.com/snarkd/snarkd/filecoin/prooftypes"
	"github.com/snarkd/snarkd/filecoin/sealer"
	"github.com/snarkd/snarkd/internal/fuzzedit"
)

var (
	fixtureOnce sync.Once
	fixture     []byte
)

// sealed2KiB returns the JSON of a real 2KiB V1_1 C1 output.
func sealed2KiB(t testing.TB) []byte {
	fixtureOnce.Do(func() {
		p, _ := prooftypes.Lookup(abi.RegisteredSealProof_StackedDrg2KiBV1_1)
		r := rand.NewChaCha8([32]byte{5})
		data, err := sealer.RandomData(r, p.SectorSize)
		if err != nil {
			panic(err)
		}
		s, err := sealer.Seal(context.Background(), p, data, prooftypes.ProverID(1000), 1, [32]byte{1, 2, 3})
		if err != nil {
			panic(err)
		}
		out, err := s.Commit1(context.Background(), [32]byte{9, 9, 9})
		if err != nil {
			panic(err)
		}
		if fixture, err = out.Encode(); err != nil {
			panic(err)
		}
	})
	return fixture
}

func decodeOK(t *testing.T) *c1.Output {
	t.Helper()
	o, _, err := c1.Decode(sealed2KiB(t))
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func TestDecodeStructuralErrors(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(o *c1.Output)
		field  string
	}{
		{"unknown proof", func(o *c1.Output) { o.RegisteredProof = "StackedDrg4KiBV1" }, "registered_proof"},
		{"proof vs sector size", func(o *c1.Output) { o.RegisteredProof = "StackedDrg8MiBV1_1" }, "vanilla_proofs"},
		{"zero comm_d", func(o *c1.Output) { o.CommD = c1.Domain{} }, "comm_d"},
		{"zero seed", func(o *c1.Output) { o.Seed = c1.Domain{} }, "seed"},
		{"comm_r out of range", func(o *c1.Output) { o.CommR[31] = 0xff }, "comm_r"},
		{"extra partition", func(o *c1.Output) {
			ps := o.Partitions()
			o.VanillaProofs["StackedDrg2KiBV1"] = append(ps, ps[0])
		}, "vanilla_proofs.StackedDrg2KiBV1"},
		{"missing challenge", func(o *c1.Output) {
			o.VanillaProofs["StackedDrg2KiBV1"][0] = o.Partitions()[0][:1]
		}, "vanilla_proofs.StackedDrg2KiBV1[0]"},
		{"short tree D path", func(o *c1.Output) {
			p := &o.Partitions()[0][0].CommDProofs
			p.Base = p.Base[:5]
		}, "vanilla_proofs.StackedDrg2KiBV1[0][0].comm_d_proofs.path"},
		{"arity", func(o *c1.Output) {
			p := &o.Partitions()[0][1].CommRLastProof
			p.Base[1].Hashes = p.Base[1].Hashes[:6]
		}, "[0][1].comm_r_last_proof.path[1].hashes"},
		{"path index", func(o *c1.Output) {
			o.Partitions()[0][0].ReplicaColumnProofs.ExpParents[3].InclusionProof.Base[0].Index = 8
		}, "exp_parents[3].inclusion_proof.path[0].index"},
		{"column height", func(o *c1.Output) {
			c := &o.Partitions()[0][0].ReplicaColumnProofs.DRGParents[1].Column
			c.Rows = c.Rows[:1]
		}, "drg_parents[1].column.rows"},
		{"label out of range", func(o *c1.Output) {
			o.Partitions()[0][0].ReplicaColumnProofs.CX.Column.Rows[0][31] = 0x80
		}, "c_x.column.rows[0]"},
		{"sub proof for 8-0-0", func(o *c1.Output) {
			p := &o.Partitions()[0][0].CommRLastProof
			p.Kind = c1.Sub
		}, "comm_r_last_proof.data"},
		{"drg parent count", func(o *c1.Output) {
			r := &o.Partitions()[0][0].ReplicaColumnProofs
			r.DRGParents = r.DRGParents[:5]
		}, "drg_parents"},
		{"labeling layers", func(o *c1.Output) {
			c := &o.Partitions()[0][0]
			c.LabelingProofs = c.LabelingProofs[:1]
		}, "labeling_proofs"},
		{"labeling parents", func(o *c1.Output) {
			lp := &o.Partitions()[0][1].LabelingProofs[1]
			lp.Parents = lp.Parents[:36]
		}, "labeling_proofs[1].parents"},
		{"encoding layer", func(o *c1.Output) { o.Partitions()[0][0].EncodingProof.LayerIndex = 1 }, "encoding_proof.layer_index"},
		{"challenge copies disagree", func(o *c1.Output) { o.Partitions()[0][0].LabelingProofs[0].Node++ }, "labeling_proofs[0].node"},
		{"comm_d root", func(o *c1.Output) { o.Partitions()[0][1].CommDProofs.Root[0] ^= 1 }, "comm_d_proofs.root"},
		{"comm_c differs", func(o *c1.Output) {
			o.Partitions()[0][1].ReplicaColumnProofs.CX.InclusionProof.Root[0] ^= 1
		}, "[0][1].replica_column_proofs.c_x.inclusion_proof.root"},
		{"challenge zero", func(o *c1.Output) { o.Partitions()[0][0].ReplicaColumnProofs.CX.Column.Index = 0 }, "c_x.column.index"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := decodeOK(t)
			tc.mutate(o)
			b, err := o.Encode()
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = c1.Decode(b)
			var fe *c1.FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("got %v, want a FieldError", err)
			}
			if !strings.Contains(fe.Field, tc.field) {
				t.Fatalf("error %q does not name %q", err, tc.field)
			}
		})
	}
}

func TestDecodeSyntaxErrors(t *testing.T) {
	good := string(sealed2KiB(t))
	tests := []struct {
		name string
		in   string
	}{
		{"empty", ""},
		{"not json", "{"},
		{"trailing data", good + " {}"},
		{"unknown field, wrong value", strings.Replace(good, `"comm_r":`, `"comm_x":[1],"comm_r":"abc","x":`, 1)},
		{"unknown variant", strings.Replace(good, `{"data":{"Single":`, `{"data":{"Single2":`, 1)},
		{"unknown variant beside a known one", strings.Replace(good, `{"data":{"Single":`, `{"data":{"Other":1,"Single":`, 1)},
		{"short domain", replaceDomain(good, "seed", "[1,2,3]")},
		{"long domain", replaceDomain(good, "ticket", "["+strings.Repeat("1,", 32)+"1]")},
		{"byte 256", replaceDomain(good, "ticket", "[256"+strings.Repeat(",0", 31)+"]")},
		{"negative byte", replaceDomain(good, "ticket", "[-1"+strings.Repeat(",0", 31)+"]")},
		{"float byte", replaceDomain(good, "ticket", "[1.5"+strings.Repeat(",0", 31)+"]")},
		{"string domain", replaceDomain(good, "ticket", `"abc"`)},
		{"two variants", strings.Replace(good, `{"data":{"Single":`, `{"data":{"Sub":{"base_proof":{"path":[]},"sub_proof":{"path":[]},"root":[`+zeros()+`],"leaf":[`+zeros()+`]},"Single":`, 1)},
		{"no variant", strings.Replace(good, `{"data":{"Single":`, `{"data":{"Other":`, 1)},
		{"_h not null", strings.Replace(good, `"_h":null`, `"_h":1`, 1)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, _, err := c1.Decode([]byte(tc.in)); err == nil {
				t.Fatal("accepted")
			}
		})
	}
}

func zeros() string { return strings.TrimSuffix(strings.Repeat("0,", 32), ",") }

// replaceDomain replaces the top-level 32-byte field name's value.
func replaceDomain(doc, name, value string) string {
	key := `"` + name + `":[`
	i := strings.LastIndex(doc, key)
	j := strings.Index(doc[i:], "]")
	return doc[:i] + `"` + name + `":` + value + doc[i+j+1:]
}

func TestCommit2In(t *testing.T) {
	good := sealed2KiB(t)
	w, _ := json.Marshal(c1.Commit2In{SectorNum: 1, Phase1Out: good, SectorSize: 2048})
	in, o, p, err := c1.DecodeCommit2In(w)
	if err != nil {
		t.Fatal(err)
	}
	if in.SectorNum != 1 || p.SectorSize != 2048 || o.RegisteredProof != "StackedDrg2KiBV1_1" {
		t.Fatalf("decoded %+v %s", in, o.RegisteredProof)
	}
	bad := []struct {
		name string
		in   any
		want string
	}{
		{"size mismatch", c1.Commit2In{SectorNum: 1, Phase1Out: good, SectorSize: 8 << 20}, "SectorSize"},
		{"negative sector", c1.Commit2In{SectorNum: -1, Phase1Out: good, SectorSize: 2048}, "SectorNum"},
		{"empty phase1", c1.Commit2In{SectorNum: 1, SectorSize: 2048}, "Phase1Out"},
		{"bad inner", c1.Commit2In{SectorNum: 1, Phase1Out: []byte(`{"registered_proof":"x"}`), SectorSize: 2048}, "Phase1Out"},
	}
	for _, tc := range bad {
		b, _ := json.Marshal(tc.in)
		if _, _, _, err := c1.DecodeCommit2In(b); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error naming %q", tc.name, err, tc.want)
		}
	}
	if _, _, _, err := c1.DecodeCommit2In([]byte(`{"SectorNum":1,"Phase1Out":"!!","SectorSize":2048}`)); err == nil {
		t.Error("invalid base64 accepted")
	}
	// Unknown envelope fields are ignored, as serde ignores them, and named.
	extra, _ := json.Marshal(map[string]any{"SectorNum": 1, "Phase1Out": good, "SectorSize": 2048, "Miner": "f01000"})
	if in, _, _, err := c1.DecodeCommit2In(extra); err != nil || in.SectorNum != 1 {
		t.Errorf("envelope with an unknown field: %+v %v", in, err)
	}
	if got := c1.UnknownCommit2InFields(extra); !reflect.DeepEqual(got, []string{"Miner"}) {
		t.Errorf("UnknownCommit2InFields = %q, want [Miner]", got)
	}
	if got := c1.UnknownCommit2InFields(w); len(got) != 0 {
		t.Errorf("UnknownCommit2InFields of a plain envelope = %q", got)
	}
}

// TestDecodeUnknownFields: a real C1 output with fields no version of snarkd knows, at the top
// level and nested (beside a challenge proof's fields, in a column, beside a Merkle proof's
// "data", inside its variant, in a path element), decodes to the same output, and
// UnknownFields names each of them once.
func TestDecodeUnknownFields(t *testing.T) {
	good := string(sealed2KiB(t))
	want := decodeOK(t)
	doc := good
	for _, r := range []struct{ old, new string }{
		{`{"registered_proof":`, `{"format_version":2,"registered_proof":`},
		{`"comm_d_proofs":`, `"extra_proof":{"a":[1,{"b":null}]},"comm_d_proofs":`},
		{`"_h":null`, `"_h":null,"height":"x\"y"`},
		{`{"data":{"Single":{`, `{"cached":true,"data":{"Single":{"depth":3,`},
		{`"index":`, `"Weight":1.5e3,"index":`},
	} {
		if !strings.Contains(doc, r.old) {
			t.Fatalf("fixture has no %s", r.old)
		}
		doc = strings.ReplaceAll(doc, r.old, r.new)
	}
	got, p, err := c1.Decode([]byte(doc))
	if err != nil {
		t.Fatalf("C1 output with unknown fields refused: %v", err)
	}
	if p.SectorSize != 2048 || !reflect.DeepEqual(got, want) {
		t.Fatal("C1 output with unknown fields decodes to another value than the original")
	}
	fields := c1.UnknownFields([]byte(doc))
	wantFields := []string{
		"format_version",
		"vanilla_proofs.*[][].comm_d_proofs.cached",
		"vanilla_proofs.*[][].comm_d_proofs.data.Single.depth",
		"vanilla_proofs.*[][].comm_d_proofs.data.Single.path.path[].Weight",
		"vanilla_proofs.*[][].extra_proof",
		"vanilla_proofs.*[][].replica_column_proofs.c_x.column.height",
	}
	for _, f := range wantFields {
		if !slices.Contains(fields, f) {
			t.Errorf("UnknownFields does not name %s: %q", f, fields)
		}
	}
	if len(c1.UnknownFields([]byte(good))) != 0 {
		t.Errorf("UnknownFields of the plain output: %q", c1.UnknownFields([]byte(good)))
	}
	// Case-insensitive matches are fields encoding/json takes, not unknown ones.
	if f := c1.UnknownFields([]byte(strings.Replace(good, `"seed":`, `"SEED":`, 1))); len(f) != 0 {
		t.Errorf("a key matching a field but for case named unknown: %q", f)
	}
	// The values stay strict: a wrong value beside unknown fields is still refused.
	if _, _, err := c1.Decode([]byte(strings.Replace(doc, `"format_version":2,"registered_proof":"StackedDrg2KiBV1_1"`, `"format_version":2,"registered_proof":"StackedDrg4KiBV1"`, 1))); err == nil {
		t.Fatal("unknown proof type beside an unknown field accepted")
	}
	if _, _, err := c1.Decode([]byte(replaceDomain(doc, "seed", "[1,2,3]"))); err == nil {
		t.Fatal("short seed beside unknown fields accepted")
	}
}

func TestDomainElement(t *testing.T) {
	var d c1.Domain
	d[0] = 5
	e, err := d.Element()
	if err != nil || e.Uint64() != 5 || c1.DomainOf(&e) != d {
		t.Fatalf("element %v %v", e, err)
	}
	// r itself (LE) is not canonical.
	r := c1.Domain{1, 0, 0, 0, 255, 255, 255, 255, 254, 91, 254, 255, 2, 164, 189, 83, 5, 216, 161, 9, 8, 216, 57, 51, 72, 125, 157, 41, 83, 167, 237, 115}
	if _, err := r.Element(); err == nil {
		t.Fatal("r accepted")
	}
	r[0] = 0
	if _, err := r.Element(); err != nil {
		t.Fatalf("r−1 refused: %v", err)
	}
}

// smallJSON bounds the inputs also decoded as a single Merkle proof or domain element: those
// are a few KB, and a large document would only repeat the same JSON scan.
const smallJSON = 8 << 10

func FuzzDecode(f *testing.F) {
	good := sealed2KiB(f)
	w, _ := json.Marshal(c1.Commit2In{SectorNum: 3, Phase1Out: good, SectorSize: 2048})
	bases := [][]byte{nil, good, w}
	at := func(s string) uint32 { return uint32(bytes.Index(good, []byte(s))) }
	for _, s := range []struct {
		base     uint8
		off, del uint32
		patch    string
	}{
		{1, 0, 0, ""}, // the whole output
		{2, 0, 0, ""}, // in the Lotus wrapper
		{1, uint32(len(good) / 2), ^uint32(0), ""}, // truncated
		{1, at(`"index":1`), 9, `"index":7`},
		{1, at(`"comm_d":[`) + 10, 1, "0"},
		{0, 0, 0, `{"registered_proof":"StackedDrg2KiBV1_1","vanilla_proofs":{"StackedDrg2KiBV1":[[]]}}`},
		{0, 0, 0, `{"data":{"Single":{"root":[0],"leaf":[],"path":{"path":[]}}}}`},
		{0, 0, 0, `[1]`},
	} {
		f.Add(s.base, s.off, s.del, []byte(s.patch))
	}
	f.Fuzz(func(t *testing.T, base uint8, off, del uint32, patch []byte) {
		b := fuzzedit.Splice(bases[int(base)%len(bases)], off, del, patch)
		var fe *c1.FieldError
		o, p, err := c1.Decode(b)
		if err != nil && !errors.Is(err, c1.ErrMalformed) && !errors.As(err, &fe) {
			t.Fatalf("error of no documented kind: %v", err)
		}
		if err == nil {
			again, err := o.Encode()
			if err != nil {
				t.Fatalf("re-encode: %v", err)
			}
			o2, p2, err := c1.Decode(again)
			if err != nil || p2 != p {
				t.Fatalf("decode of re-encoding: %v", err)
			}
			again2, _ := o2.Encode()
			if !bytes.Equal(again, again2) {
				t.Fatal("encoding not stable")
			}
			if _, pa, n, err := c1.DecodeAuto(b); err != nil || pa != p || n != -1 {
				t.Fatalf("DecodeAuto of a bare output: %v, sector %d", err, n)
			}
			// Unknown fields are accepted (as serde accepts them); the re-encoding has none.
			_ = c1.UnknownFields(b)
			if f := c1.UnknownFields(again); len(f) != 0 {
				t.Fatalf("re-encoding has unknown fields %q", f)
			}
		}
		// A large bare output is the case above again; the wrapper decoders and the small
		// types see small inputs and wrappers.
		if len(b) <= smallJSON || bytes.Contains(b, []byte("Phase1Out")) {
			w, _, p, err := c1.DecodeCommit2In(b)
			_, pa, n, aerr := c1.DecodeAuto(b)
			if err == nil && (aerr != nil || pa != p || n != w.SectorNum) {
				t.Fatalf("DecodeAuto of a wrapper: %v, sector %d, want %d", aerr, n, w.SectorNum)
			}
		}
		if len(b) <= smallJSON {
			var m c1.MerkleProof
			_ = json.Unmarshal(b, &m)
			var d c1.Domain
			_ = json.Unmarshal(b, &d)
		}
	})
}

func TestDecodeAuto(t *testing.T) {
	good := sealed2KiB(t)
	if _, p, n, err := c1.DecodeAuto(good); err != nil || n != -1 || p.SectorSize != 2048 {
		t.Fatalf("bare: %v %d", err, n)
	}
	w, _ := json.Marshal(c1.Commit2In{SectorNum: 9, Phase1Out: good, SectorSize: 2048})
	if _, _, n, err := c1.DecodeAuto(w); err != nil || n != 9 {
		t.Fatalf("wrapper: %v %d", err, n)
	}
	if _, _, _, err := c1.DecodeAuto([]byte("[1]")); !errors.Is(err, c1.ErrMalformed) {
		t.Fatalf("array: %v", err)
	}
}
