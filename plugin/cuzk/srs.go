package cuzk

import (
	"context"
	"fmt"
	"regexp"
	"time"

	"github.com/snarkd/snarkd/filecoin/prooftypes"
	"github.com/snarkd/snarkd/prover"
	"github.com/snarkd/snarkd/rpcapi"
)

// circuitIDRe matches cuzk's parameter names: kind and sector size, e.g. "porep-32g".
var circuitIDRe = regexp.MustCompile(`^(porep|snap|wpost|winning)-(2k|8m|512m|32g|64g)$`)

// circuitKinds maps the kind part of a circuit ID onto the pipeline's proof kinds.
var circuitKinds = map[string]prover.Kind{
	"porep":   rpcapi.KindPoRepC2,
	"snap":    rpcapi.KindSnapProve,
	"wpost":   rpcapi.KindWindowPoSt,
	"winning": rpcapi.KindWinningPoSt,
}

// circuitSizes maps the size part of a circuit ID onto sector sizes.
var circuitSizes = map[string]uint64{
	"2k":   prooftypes.SectorSize2KiB,
	"8m":   prooftypes.SectorSize8MiB,
	"512m": prooftypes.SectorSize512MiB,
	"32g":  prooftypes.SectorSize32GiB,
	"64g":  prooftypes.SectorSize64GiB,
}

// ParseCircuitID reads a cuzk circuit ID ("porep-32g", "wpost-2k", …) as a proof kind and a
// sector size; ok is false for anything else.
func ParseCircuitID(id string) (kind prover.Kind, sectorSize uint64, ok bool) {
	m := circuitIDRe.FindStringSubmatch(id)
	if m == nil {
		return "", 0, false
	}
	return circuitKinds[m[1]], circuitSizes[m[2]], true
}

// CircuitID is the cuzk circuit ID of a parameter set of kind for sectors of sectorSize
// bytes; ok is false when cuzk has no name for it (the test circuit).
func CircuitID(kind prover.Kind, sectorSize uint64) (id string, ok bool) {
	for k, pk := range circuitKinds {
		if pk != kind {
			continue
		}
		for s, size := range circuitSizes {
			if size == sectorSize {
				return k + "-" + s, true
			}
		}
	}
	return "", false
}

// UnknownCircuitError is a circuit ID that is neither cuzk's nor the name of a loaded set.
type UnknownCircuitError struct {
	ID string
}

func (e *UnknownCircuitError) Error() string {
	return fmt.Sprintf("circuit_id %q: unknown; want porep, snap, wpost or winning, a dash, and the sector size (2k, 8m, 512m, 32g, 64g), e.g. porep-32g, or a circuit_id GetStatus lists in loaded_srs", e.ID)
}

// SRSInfo is one parameter set as GetStatus reports it.
type SRSInfo struct {
	// CircuitID is cuzk's ID ("porep-32g") or, for sets cuzk has no name for, the daemon's.
	CircuitID string
	Bytes     uint64
	// Loaded is false while the set is still being read.
	Loaded bool
	// Refs counts proofs in flight that hold the set.
	Refs int
}

// ParamSRS serves PreloadSRS, EvictSRS and GetStatus's loaded_srs from the pipeline's
// parameter cache.
type ParamSRS struct {
	cache *prover.ParamCache
}

var _ SRS = (*ParamSRS)(nil)

// NewParamSRS returns the SRS of cache.
func NewParamSRS(cache *prover.ParamCache) *ParamSRS { return &ParamSRS{cache: cache} }

// name resolves a circuit ID to the cache's name for its parameters: cuzk's IDs through their
// proof kind and sector size (returned too), other IDs when they name a set in the cache as
// loaded_srs shows it (kind empty). Anything else is an *UnknownCircuitError.
func (s *ParamSRS) name(id string) (name string, kind prover.Kind, size uint64, err error) {
	if id == "" {
		return "", "", 0, &UnknownCircuitError{ID: id}
	}
	if kind, size, ok := ParseCircuitID(id); ok {
		name, err := s.cache.ParamName(kind, size)
		if err != nil {
			return "", "", 0, err
		}
		return name, kind, size, nil
	}
	for _, p := range s.cache.Loaded() {
		if p.Circuit == id {
			return id, "", 0, nil
		}
	}
	return "", "", 0, &UnknownCircuitError{ID: id}
}

// Preload loads a circuit's parameters into the cache as its first proof would.
func (s *ParamSRS) Preload(ctx context.Context, id string) (bool, time.Duration, error) {
	name, kind, size, err := s.name(id)
	if err != nil {
		return false, 0, err
	}
	if kind == "" {
		// A set named by the daemon's own name (e.g. the test circuit's) is known only once
		// it is in memory.
		return true, 0, nil
	}
	res, err := s.cache.Preload(ctx, kind, size)
	if err != nil {
		return false, 0, err
	}
	log.Infow("PreloadSRS", "circuit_id", id, "params", name, "already_loaded", res.AlreadyLoaded, "took", res.Took, "bytes", res.Bytes)
	return res.AlreadyLoaded, res.Took, nil
}

// Evict drops a circuit's parameters from the cache.
func (s *ParamSRS) Evict(_ context.Context, id string) (bool, uint64, error) {
	name, _, _, err := s.name(id)
	if err != nil {
		return false, 0, err
	}
	was, freed := s.cache.Evict(name)
	log.Infow("EvictSRS", "circuit_id", id, "params", name, "was_loaded", was, "freed_bytes", freed)
	return was, freed, nil
}

// Loaded lists the cache's sets under cuzk's circuit IDs where it has one.
func (s *ParamSRS) Loaded(context.Context) ([]SRSInfo, error) {
	var out []SRSInfo
	for _, p := range s.cache.Loaded() {
		id, ok := CircuitID(p.Kind, p.SectorSize)
		if !ok {
			id = p.Circuit
		}
		out = append(out, SRSInfo{CircuitID: id, Bytes: p.Bytes, Loaded: p.Loaded, Refs: p.Refs})
	}
	return out, nil
}
