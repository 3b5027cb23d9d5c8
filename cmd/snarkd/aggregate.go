package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/filecoin-project/go-state-types/abi"
	"github.com/filecoin-project/go-state-types/proof"
	"github.com/urfave/cli/v2"

	"github.com/snarkd/snarkd/filecoin/aggregate"
	"github.com/snarkd/snarkd/plugin/jobs"
	"github.com/snarkd/snarkd/rpcapi"
)

// infoFileUsage describes the --info file of the aggregate commands.
const infoFileUsage = "aggregate info JSON, as Lotus builds it for filecoin-ffi (proof.AggregateSealVerifyProofAndInfos: " +
	"Miner, SealProof, AggregateProof, Proof, Infos [{Number, Randomness, InteractiveRandomness, SealedCID, UnsealedCID}] in aggregation order)"

func aggregateCommand() *cli.Command {
	return &cli.Command{
		Name:  "aggregate",
		Usage: "aggregate sectors' C2 proofs into one SnarkPack proof (ProveCommitAggregate, NI-PoRep batches) and verify aggregates",
		Subcommands: []*cli.Command{
			{
				Name:      "seals",
				Usage:     "aggregate the C2 proofs of the --info file's sectors, one proof file per sector in the same order, as a job",
				ArgsUsage: "C2-PROOF-FILE...",
				Description: "Each C2 proof file holds one sector's C2 output: 192 bytes per partition, raw or base64 (what\n" +
					"`snarkd prove c2` writes with --out, or prints). For NI-PoRep they are the circuit proofs, not an\n" +
					"NI-PoRep C2 answer (an aggregate already). The daemon verifies the aggregate before it answers, so\n" +
					"every field of every info is needed. The aggregate is printed in base64, or written raw with --out.",
				Flags: append([]cli.Flag{
					&cli.StringFlag{Name: "info", Required: true, Usage: infoFileUsage + "; its Proof is not read"},
					&cli.StringFlag{Name: "aggregation", Usage: "SnarkPack version, overriding the info's AggregateProof: v1 (SnarkPackV1) or v2 (SnarkPackV2)"},
				}, proofFlags()...),
				Action: func(c *cli.Context) error {
					req, err := aggregateRequest(c)
					if err != nil {
						return err
					}
					return runProof(c, req)
				},
			},
			{
				Name:  "verify",
				Usage: "verify a SnarkPack aggregate of the --info file's sectors (exit status 1 when it does not verify)",
				Flags: []cli.Flag{apiInfoFlag, jsonFlag,
					&cli.StringFlag{Name: "info", Required: true, Usage: infoFileUsage},
					&cli.StringFlag{Name: "proof", Usage: "the aggregate, raw or base64 (default: the info's Proof)"},
					&cli.StringFlag{Name: "aggregation", Usage: "SnarkPack version, overriding the info's AggregateProof: v1 or v2"},
				},
				Action: verifyAggregate,
			},
		},
	}
}

// aggregateVerifyResult is `aggregate verify --json`; an aggregate that does not verify still
// exits 1.
type aggregateVerifyResult struct {
	Valid       bool   `json:"valid"`
	SealProof   string `json:"seal_proof"`
	Aggregation string `json:"aggregation"`
	Sectors     int    `json:"sectors"`
	// Proofs counts the sectors' partition proofs; Padded the proofs the aggregate holds.
	Proofs int `json:"proofs"`
	Padded int `json:"padded"`
}

// readAggregateInfo reads and checks the --info file and applies --aggregation.
func readAggregateInfo(c *cli.Context) (proof.AggregateSealVerifyProofAndInfos, *aggregate.Set, error) {
	path := c.String("info")
	var info proof.AggregateSealVerifyProofAndInfos
	data, err := os.ReadFile(path)
	if err != nil {
		return info, nil, usagef("--info: %w", err)
	}
	if info, err = parseAggregateInfo(data); err != nil {
		return info, nil, usagef("--info %s: %w", path, err)
	}
	switch v := c.String("aggregation"); v {
	case "":
	case "v1", "1", "SnarkPackV1":
		info.AggregateProof = abi.RegisteredAggregationProof_SnarkPackV1
	case "v2", "2", "SnarkPackV2":
		info.AggregateProof = abi.RegisteredAggregationProof_SnarkPackV2
	default:
		return info, nil, usagef("--aggregation %q: want v1 (SnarkPackV1) or v2 (SnarkPackV2)", v)
	}
	set, err := aggregate.Decode(info.SealProof, info.AggregateProof, info.Miner, info.Infos)
	if err != nil {
		return info, nil, usagef("--info %s: %w", path, err)
	}
	return info, set, nil
}

// parseAggregateInfo decodes an aggregate info JSON object strictly: a misspelt field is an
// error, not a field left empty.
func parseAggregateInfo(data []byte) (proof.AggregateSealVerifyProofAndInfos, error) {
	var info proof.AggregateSealVerifyProofAndInfos
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&info); err != nil {
		return info, fmt.Errorf("not an aggregate info JSON object (AggregateSealVerifyProofAndInfos): %w", err)
	}
	if dec.More() {
		return info, errors.New("more than one JSON value")
	}
	return info, nil
}

// aggregateRequest builds `aggregate seals`' request, checked as the daemon will check it.
func aggregateRequest(c *cli.Context) (rpcapi.ProofRequest, error) {
	info, set, err := readAggregateInfo(c)
	if err != nil {
		return rpcapi.ProofRequest{}, err
	}
	files := c.Args().Slice()
	if len(files) != len(info.Infos) {
		return rpcapi.ProofRequest{}, usagef("%d C2 proof files for the %d sectors of --info %s: want one per sector, in the same order",
			len(files), len(info.Infos), c.String("info"))
	}
	proofs := make([][]byte, len(files))
	for i, f := range files {
		if strings.HasPrefix(f, "-") {
			return rpcapi.ProofRequest{}, usagef("%s: flags go before the C2 proof files", f)
		}
		data, err := os.ReadFile(f)
		if err != nil {
			return rpcapi.ProofRequest{}, usage(err)
		}
		proofs[i] = decodeProofFile(data)
	}
	if err := set.CheckProofs(proofs); err != nil {
		var ie *aggregate.InputError
		var i int
		if errors.As(err, &ie) {
			if _, serr := fmt.Sscanf(ie.Field, "Proofs[%d]", &i); serr == nil && i < len(files) {
				return rpcapi.ProofRequest{}, usagef("%s (sector %d): %s", files[i], info.Infos[i].Number, ie.Reason)
			}
		}
		return rpcapi.ProofRequest{}, usage(err)
	}
	req := rpcapi.ProofRequest{RequestID: c.String("request-id"), Kind: rpcapi.KindAggregateSeals, RegisteredProof: int64(info.SealProof),
		MinerID: info.Miner, Aggregate: &rpcapi.SealAggregate{AggregateProof: info.AggregateProof, Infos: info.Infos, Proofs: proofs}}
	if len(req.RequestID) > jobs.MaxRequestIDLen {
		return rpcapi.ProofRequest{}, usagef("--request-id: %d bytes, want at most %d", len(req.RequestID), jobs.MaxRequestIDLen)
	}
	if err := jobs.ValidateFields(&req); err != nil {
		return rpcapi.ProofRequest{}, usage(err)
	}
	return req, nil
}

// decodeProofFile returns a proof file's bytes: base64 text decoded (surrounding whitespace
// and line breaks allowed), anything else as it is.
func decodeProofFile(data []byte) []byte {
	text := strings.Join(strings.Fields(string(data)), "")
	if text == "" {
		return data
	}
	if b, err := base64.StdEncoding.DecodeString(text); err == nil {
		return b
	}
	return data
}

// verifyAggregate is `aggregate verify`.
func verifyAggregate(c *cli.Context) error {
	info, set, err := readAggregateInfo(c)
	if err != nil {
		return err
	}
	if p := c.String("proof"); p != "" {
		data, err := os.ReadFile(p)
		if err != nil {
			return usagef("--proof: %w", err)
		}
		info.Proof = decodeProofFile(data)
	}
	if len(info.Proof) == 0 {
		return usagef("no aggregate to verify: --info %s has no Proof; give the aggregate's file with --proof", c.String("info"))
	}
	api, closer, err := proverClient(c, false)
	if err != nil {
		return err
	}
	defer closer()
	ok, err := api.VerifyAggregateSeals(c.Context, info)
	if err != nil {
		return err
	}
	res := aggregateVerifyResult{Valid: ok, SealProof: set.Proof.Name, Aggregation: set.Version.String(), Sectors: len(set.Sectors),
		Proofs: set.Proofs(), Padded: set.Padded()}
	what := fmt.Sprintf("%s aggregate of %d %s sectors (%d proofs, %d padded)", res.Aggregation, res.Sectors, res.SealProof, res.Proofs, res.Padded)
	if !ok {
		if c.Bool("json") {
			if err := printJSON(c, res); err != nil {
				return err
			}
		}
		return cli.Exit("invalid: the "+what+" does not verify", exitFailed)
	}
	return printResult(c, res, func(w io.Writer) { fmt.Fprintf(w, "valid: the %s verifies\n", what) })
}
