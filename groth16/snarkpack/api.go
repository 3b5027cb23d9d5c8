package snarkpack

import "fmt"

// Version is the aggregate's transcript version (abi.RegisteredAggregationProof SnarkPackV1 = 0
// is V1, SnarkPackV2 = 1 is V2). NI-PoRep uses V2.
type Version int

const (
	// V1 is SnarkPack as first deployed (ProveCommitAggregate before network version 16).
	V1 Version = 1
	// V2 binds the first GIPA round and the KZG point to more of the transcript.
	V2 Version = 2
)

func (v Version) String() string {
	switch v {
	case V1:
		return "SnarkPackV1"
	case V2:
		return "SnarkPackV2"
	}
	return fmt.Sprintf("SnarkPack(%d)", int(v))
}

// VersionOf maps abi.RegisteredAggregationProof (0, 1) to a Version.
func VersionOf(registered int64) (Version, error) {
	switch registered {
	case 0:
		return V1, nil
	case 1:
		return V2, nil
	}
	return 0, fmt.Errorf("unknown aggregation proof type %d (want 0 SnarkPackV1 or 1 SnarkPackV2)", registered)
}

// SRSFile is the published inner-product SRS's file name in the parameter directory.
const SRSFile = "v28-fil-inner-product-v1.srs"

// MaxSRSVector is the longest SRS vector a file may declare ((2 << 19) + 1, bellperson's
// MAX_SRS_SIZE); MaxProofs is the most proofs one aggregate holds with the published SRS as
// filecoin-proofs reads it (its first (2 << 14) + 1 powers).
const (
	MaxSRSVector = (2 << 19) + 1
	MaxProofs    = 1 << 14
)
