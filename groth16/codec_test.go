package groth16_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/groth16"
	"github.com/snarkd/snarkd/testcircuit"
)

var (
	smallOnce   sync.Once
	smallParams []byte
	smallProof  []byte
)

// smallFixture returns the .params of a 64-constraint test circuit and a proof for it.
func smallFixture(tb testing.TB) ([]byte, []byte) {
	smallOnce.Do(func() {
		ctx := context.Background()
		c := testcircuit.New(64, 7)
		pk, err := groth16.SetupFromSeed(ctx, c, []byte("codec"))
		if err != nil {
			panic(err)
		}
		var b bytes.Buffer
		if _, err := pk.WriteTo(&b); err != nil {
			panic(err)
		}
		smallParams = b.Bytes()
		proofs, err := groth16.ProveBatch(ctx, pk, []cs.Circuit{c, c}, nil, nil)
		if err != nil {
			panic(err)
		}
		smallProof = groth16.MarshalProofs(proofs)
	})
	return smallParams, smallProof
}

func TestParamsRoundTrip(t *testing.T) {
	raw, _ := smallFixture(t)
	for _, check := range []groth16.Check{groth16.CheckNone, groth16.CheckOnCurve, groth16.CheckSubgroup} {
		p, err := groth16.ParseParameters(raw, groth16.ReadOptions{Check: check, VKCheck: check})
		if err != nil {
			t.Fatalf("check %v: %v", check, err)
		}
		if got := p.ParametersSize(); got != int64(len(raw)) {
			t.Errorf("ParametersSize %d, file %d", got, len(raw))
		}
		var out bytes.Buffer
		if _, err := p.WriteTo(&out); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out.Bytes(), raw) {
			t.Fatalf("check %v: params write→read→write differs", check)
		}
		vk := p.VK.Bytes()
		if int64(len(vk)) != groth16.VerifyingKeySize(len(p.VK.IC)) || !bytes.Equal(vk, raw[:len(vk)]) {
			t.Fatal("vk bytes are not the params prefix")
		}
		vk2, err := groth16.ParseVerifyingKey(vk, groth16.CheckSubgroup)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(vk2.Bytes(), vk) {
			t.Fatal("vk round trip differs")
		}
	}
	// The streaming reader with an unknown size and the mmap reader give the same result.
	p1, err := groth16.ReadParameters(bytes.NewReader(raw), -1, groth16.ReadOptions{Check: groth16.CheckOnCurve})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "test.params")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	p2, err := groth16.OpenParameters(path, groth16.FilecoinReadOptions())
	if err != nil {
		t.Fatal(err)
	}
	var b1, b2 bytes.Buffer
	p1.WriteTo(&b1)
	p2.WriteTo(&b2)
	if !bytes.Equal(b1.Bytes(), raw) || !bytes.Equal(b2.Bytes(), raw) {
		t.Fatal("stream/mmap readers disagree")
	}
	lay, err := groth16.ScanLayout(bytes.NewReader(raw), int64(len(raw)))
	if err != nil {
		t.Fatal(err)
	}
	vkPath := filepath.Join(t.TempDir(), "test.vk")
	os.WriteFile(vkPath, raw[:lay.H.Offset-4], 0o600)
	if vk, err := groth16.OpenVerifyingKey(vkPath, groth16.CheckSubgroup); err != nil || !bytes.Equal(vk.Bytes(), raw[:lay.H.Offset-4]) {
		t.Fatalf("OpenVerifyingKey: %v", err)
	}
	os.WriteFile(vkPath, raw[:lay.H.Offset], 0o600)
	if _, err := groth16.OpenVerifyingKey(vkPath, groth16.CheckSubgroup); err == nil || !strings.Contains(err.Error(), "trailing") {
		t.Fatalf("OpenVerifyingKey with trailing bytes: %v", err)
	}
	if lay.End != int64(len(raw)) || lay.H.Count != int64(len(p1.H)) || lay.BG2.Count != int64(len(p1.BG2)) || lay.ICLen != int64(len(p1.VK.IC)) {
		t.Errorf("layout %+v does not match the parsed parameters", lay)
	}
}

func TestParamsBadInput(t *testing.T) {
	raw, _ := smallFixture(t)
	lay, _ := groth16.ScanLayout(bytes.NewReader(raw), int64(len(raw)))
	flip := func(off int64, mask byte) []byte {
		b := append([]byte(nil), raw...)
		b[off] ^= mask
		return b
	}
	cases := []struct {
		name string
		data []byte
		opts groth16.ReadOptions
		want string
	}{
		{"empty", nil, groth16.ReadOptions{}, "verifying key header"},
		{"truncated header", raw[:500], groth16.ReadOptions{}, "verifying key header"},
		{"truncated h", raw[:lay.H.Offset+10], groth16.ReadOptions{}, "h:"},
		{"truncated b_g2", raw[:len(raw)-1], groth16.ReadOptions{}, "b_g2"},
		{"trailing", append(append([]byte(nil), raw...), 0), groth16.ReadOptions{}, "trailing"},
		{"huge h length", func() []byte {
			b := append([]byte(nil), raw...)
			copy(b[lay.H.Offset-4:], []byte{0xff, 0xff, 0xff, 0xff})
			return b
		}(), groth16.ReadOptions{}, "need"},
		{"bad flags", flip(lay.L.Offset, 0x80), groth16.ReadOptions{}, "l point 0"},
		{"x not below p", func() []byte {
			b := append([]byte(nil), raw...)
			for i := int64(0); i < 48; i++ {
				b[lay.A.Offset+i] = 0x1f
			}
			return b
		}(), groth16.ReadOptions{}, "a point 0"},
		{"not on curve", flip(lay.H.Offset+95, 1), groth16.ReadOptions{Check: groth16.CheckOnCurve}, "not on the curve"},
		{"infinity", func() []byte {
			b := append([]byte(nil), raw...)
			clear(b[lay.BG1.Offset : lay.BG1.Offset+96])
			b[lay.BG1.Offset] = 0x40
			return b
		}(), groth16.ReadOptions{}, "infinity"},
		{"vk not on curve", flip(95, 1), groth16.ReadOptions{VKCheck: groth16.CheckOnCurve}, "alpha_g1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := groth16.ParseParameters(c.data, c.opts)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one mentioning %q", err, c.want)
			}
		})
	}
	// A point off the curve passes when checks are off (trusted files), and fails the
	// subgroup check through the on-curve check.
	if _, err := groth16.ParseParameters(flip(lay.H.Offset+95, 1), groth16.ReadOptions{Check: groth16.CheckNone}); err != nil {
		t.Errorf("CheckNone should not check the curve: %v", err)
	}
	if _, err := groth16.ParseParameters(flip(lay.H.Offset+95, 1), groth16.ReadOptions{Check: groth16.CheckSubgroup}); !errors.Is(err, groth16.ErrNotOnCurve) {
		t.Errorf("subgroup check: %v", err)
	}
	path := filepath.Join(t.TempDir(), "short.params")
	os.WriteFile(path, raw[:len(raw)-7], 0o600)
	if _, err := groth16.OpenParameters(path, groth16.ReadOptions{}); err == nil || !strings.Contains(err.Error(), "short.params") {
		t.Errorf("mmap reader on a truncated file: %v", err)
	}
}

func TestProofCodec(t *testing.T) {
	_, raw := smallFixture(t)
	proofs, err := groth16.ParseProofs(raw, 2)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(groth16.MarshalProofs(proofs), raw) {
		t.Fatal("multi-proof round trip differs")
	}
	bad := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "positive multiple"},
		{"short", raw[:191], "positive multiple"},
		{"wrong count", raw[:192], "want 2"},
		{"uncompressed flag", func() []byte { b := append([]byte(nil), raw...); b[0] &^= 0x80; return b }(), "proof A"},
		{"B infinity", func() []byte {
			b := append([]byte(nil), raw...)
			clear(b[48:144])
			b[48] = 0xc0
			return b
		}(), "proof B"},
		{"C not on curve", func() []byte { b := append([]byte(nil), raw...); b[192+150] ^= 0x11; return b }(), "partition 1: proof C"},
	}
	for _, c := range bad {
		if _, err := groth16.ParseProofs(c.data, 2); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
}

// tinyFixture returns the .params of the smallest test circuit (6 constraints, about 3 KB): a small,
// real file for the fuzz targets to edit.
func tinyFixture(tb testing.TB) []byte {
	pk, err := groth16.SetupFromSeed(context.Background(), testcircuit.New(6, 7), []byte("fuzz"))
	if err != nil {
		tb.Fatal(err)
	}
	var b bytes.Buffer
	if _, err := pk.WriteTo(&b); err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()
}

// spliceSeed is a seed of the fuzz targets that edit a base file (groth16.Splice).
type spliceSeed struct {
	base     uint8
	off, del uint32
	patch    []byte
}

func FuzzParseParameters(f *testing.F) {
	raw := tinyFixture(f)
	lay, err := groth16.ScanLayout(bytes.NewReader(raw), int64(len(raw)))
	if err != nil {
		f.Fatal(err)
	}
	bases := [][]byte{nil, raw}
	for _, s := range []spliceSeed{
		{1, 0, 0, nil}, // the whole file
		{1, uint32(len(raw) / 2), ^uint32(0), nil},                       // truncated
		{1, uint32(lay.H.Offset - 4), 4, []byte{0xff, 0xff, 0xff, 0xff}}, // h longer than the file
		{1, uint32(lay.BG2.Offset - 4), 4, []byte{0, 0, 0, 0}},           // b_g2 shorter than b_g1
		{0, 0, 0, []byte{}},
	} {
		f.Add(s.base, s.off, s.del, s.patch)
	}
	f.Fuzz(func(t *testing.T, base uint8, off, del uint32, patch []byte) {
		data := groth16.Splice(bases[int(base)%len(bases)], off, del, patch)
		p, err := groth16.ParseParameters(data, groth16.ReadOptions{Check: groth16.CheckOnCurve, VKCheck: groth16.CheckOnCurve})
		if err != nil {
			return
		}
		var out bytes.Buffer
		if _, err := p.WriteTo(&out); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out.Bytes(), data) {
			t.Fatal("accepted parameters do not re-encode to the input")
		}
	})
}

func FuzzParseVerifyingKey(f *testing.F) {
	raw := tinyFixture(f)
	lay, err := groth16.ScanLayout(bytes.NewReader(raw), int64(len(raw)))
	if err != nil {
		f.Fatal(err)
	}
	vk := raw[:lay.H.Offset-4]
	bases := [][]byte{nil, vk}
	for _, s := range []spliceSeed{
		{1, 0, 0, nil},                     // the whole key
		{1, 100, ^uint32(0), nil},          // truncated in alpha_g1
		{1, uint32(len(vk)), 0, []byte{0}}, // a trailing byte
		{1, groth16.VerifyingKeyHeaderSize - 4, 4, []byte{0, 0, 0, 0}}, // ic points left over
		{0, 0, 0, []byte{}},
	} {
		f.Add(s.base, s.off, s.del, s.patch)
	}
	f.Fuzz(func(t *testing.T, base uint8, off, del uint32, patch []byte) {
		data := groth16.Splice(bases[int(base)%len(bases)], off, del, patch)
		vk, err := groth16.ParseVerifyingKey(data, groth16.CheckSubgroup)
		if err != nil {
			return
		}
		if !bytes.Equal(vk.Bytes(), data) {
			t.Fatal("accepted vk does not re-encode to the input")
		}
	})
}

func FuzzParseProofs(f *testing.F) {
	_, raw := smallFixture(f)
	f.Add(raw)
	f.Add(raw[:192])
	f.Add(make([]byte, 192))
	f.Fuzz(func(t *testing.T, data []byte) {
		proofs, err := groth16.ParseProofs(data, 0)
		if err != nil {
			return
		}
		if !bytes.Equal(groth16.MarshalProofs(proofs), data) {
			t.Fatal("accepted proofs do not re-encode to the input")
		}
	})
}

func TestWriteParamFiles(t *testing.T) {
	raw, _ := smallFixture(t)
	pk, err := groth16.ParseParameters(raw, groth16.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "params")
	if err := groth16.WriteParamFiles(dir, "v28-test", 2048, pk); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "v28-test.params"))
	if err != nil || !bytes.Equal(got, raw) {
		t.Fatalf(".params differs from the parameters' bytes (err %v)", err)
	}
	vk, err := os.ReadFile(filepath.Join(dir, "v28-test.vk"))
	if err != nil || !bytes.Equal(vk, pk.VK.Bytes()) {
		t.Fatalf(".vk differs from the verifying key's bytes (err %v)", err)
	}
	meta, err := os.ReadFile(filepath.Join(dir, "v28-test.meta"))
	if err != nil || string(meta) != "{\n  \"sector_size\": 2048\n}" {
		t.Fatalf(".meta = %q (err %v)", meta, err)
	}
	if tmp, _ := filepath.Glob(filepath.Join(dir, "*.tmp")); len(tmp) != 0 {
		t.Fatalf("temporary files left: %v", tmp)
	}
	// A directory where a file must go: the error names the file and nothing is left behind.
	bad := t.TempDir()
	if err := os.Mkdir(filepath.Join(bad, "x.params"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := groth16.WriteParamFiles(bad, "x", 2048, pk); err == nil {
		t.Fatal("writing over a directory succeeded")
	}
	if tmp, _ := filepath.Glob(filepath.Join(bad, "*.tmp")); len(tmp) != 0 {
		t.Fatalf("temporary files left after a failure: %v", tmp)
	}
}
