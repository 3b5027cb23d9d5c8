package c1

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/snarkd/snarkd/filecoin/prooftypes"
)

// MaxInputBytes bounds the JSON accepted (a 64 GiB C1 output is about 50 MB).
const MaxInputBytes = 512 << 20

// FieldError says which field of a C1 output is wrong and why. Field is a path such as
// "vanilla_proofs.StackedDrg2KiBV1[0][1].replica_column_proofs.drg_parents[3].column.rows".
type FieldError struct {
	Field string
	Err   error
}

func (e *FieldError) Error() string { return "c1 output: " + e.Field + ": " + e.Err.Error() }

func (e *FieldError) Unwrap() error { return e.Err }

// ErrMalformed marks JSON that does not have the C1 output's shape.
var ErrMalformed = errors.New("malformed C1 output JSON")

func fieldErr(field string, format string, args ...any) error {
	return &FieldError{Field: field, Err: fmt.Errorf(format, args...)}
}

// unmarshal decodes one JSON value, refusing trailing data. Object keys that name no field are
// ignored, as serde (without deny_unknown_fields, which filecoin-proofs-api does not set) does:
// a newer rust-fil-proofs may add fields, and Lotus and Curio accept its output. UnknownFields
// names what was ignored; the values themselves stay strictly checked (types here, lengths in
// Domain, ranges and shapes in Validate).
func unmarshal(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

// Decode parses a C1 output and validates it against its registered proof type (structure,
// counts, path shapes, field ranges; see Validate). It returns the proof type with the output.
func Decode(b []byte) (*Output, *prooftypes.SealProof, error) {
	if len(b) > MaxInputBytes {
		return nil, nil, fmt.Errorf("%w: %d bytes exceeds the %d-byte limit", ErrMalformed, len(b), MaxInputBytes)
	}
	var o Output
	if err := unmarshal(b, &o); err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	p, err := o.Validate()
	if err != nil {
		return nil, nil, err
	}
	return &o, p, nil
}

// DecodeCommit2In parses the Lotus wrapper {SectorNum, Phase1Out, SectorSize} and the C1 output
// inside it; the wrapper's sector size must be the proof type's.
func DecodeCommit2In(b []byte) (*Commit2In, *Output, *prooftypes.SealProof, error) {
	if len(b) > MaxInputBytes*2 {
		return nil, nil, nil, fmt.Errorf("%w: %d bytes exceeds the limit", ErrMalformed, len(b))
	}
	var w Commit2In
	if err := unmarshal(b, &w); err != nil {
		return nil, nil, nil, fmt.Errorf("%w: Commit2In: %w", ErrMalformed, err)
	}
	if w.SectorNum < 0 {
		return nil, nil, nil, &FieldError{Field: "SectorNum", Err: fmt.Errorf("negative sector number %d", w.SectorNum)}
	}
	if len(w.Phase1Out) == 0 {
		// Unknown keys are ignored, so a bare C1 output decodes as an empty envelope: say so.
		if slices.Contains(UnknownCommit2InFields(b), "vanilla_proofs") {
			return nil, nil, nil, &FieldError{Field: "Phase1Out", Err: errors.New("missing: this is a bare C1 output, want it inside the Commit2In envelope {SectorNum, Phase1Out, SectorSize}")}
		}
		return nil, nil, nil, &FieldError{Field: "Phase1Out", Err: errors.New("missing or empty")}
	}
	o, p, err := Decode(w.Phase1Out)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("Commit2In.Phase1Out: %w", err)
	}
	if w.SectorSize != p.SectorSize {
		return nil, nil, nil, &FieldError{Field: "SectorSize", Err: fmt.Errorf("%d does not match %s (sector size %d)", w.SectorSize, p.Name, p.SectorSize)}
	}
	return &w, o, p, nil
}

// Encode writes the output as serde_json would (compact, fields in declaration order).
func (o *Output) Encode() ([]byte, error) {
	return json.Marshal(o)
}

// DecodeAuto accepts either a bare C1 output or the Commit2In wrapper (recognized by its
// "Phase1Out" key); sectorNum is the wrapper's sector number, or -1 for a bare output.
func DecodeAuto(b []byte) (o *Output, p *prooftypes.SealProof, sectorNum int64, err error) {
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(b, &probe); err != nil {
		return nil, nil, -1, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	if _, ok := probe["Phase1Out"]; ok {
		w, o, p, err := DecodeCommit2In(b)
		if err != nil {
			return nil, nil, -1, err
		}
		return o, p, w.SectorNum, nil
	}
	o, p, err = Decode(b)
	return o, p, -1, err
}
