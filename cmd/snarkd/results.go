package main

import (
	"io"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/snarkd/snarkd/rpcapi"
)

// printResult prints a command's result: v as one JSON object with --json, else what text
// writes. Every command that prints a result goes through it or printJSON, so scripts can ask
// any of them for JSON (TestEveryResultCommandHasJSON).
func printResult(c *cli.Context, v any, text func(w io.Writer)) error {
	if c.Bool("json") {
		return printJSON(c, v)
	}
	text(c.App.Writer)
	return nil
}

// tokenResult is `auth create-token --json`.
type tokenResult struct {
	Token string              `json:"token"`
	Perm  rpcapi.Permission   `json:"perm"`
	Allow []rpcapi.Permission `json:"allow"` // what the token grants: perm and the weaker ones
}

// apiInfoResult is `auth api-info --json`.
type apiInfoResult struct {
	// APIInfo is TOKEN:MULTIADDR, the value of SNARKD_API_INFO.
	APIInfo   string              `json:"api_info"`
	Token     string              `json:"token"`
	Multiaddr string              `json:"multiaddr"`
	Perm      rpcapi.Permission   `json:"perm"`
	Allow     []rpcapi.Permission `json:"allow"`
}

// workerConnectResult is `worker connect --json`.
type workerConnectResult struct {
	// Miner is the daemon's view of the miner after registering; nil if its status could not
	// say (the registration itself succeeded).
	Miner *rpcapi.MinerStatus `json:"miner"`
}

// cancelResult is `prove cancel --json`. It is printed for a job that had already finished
// too, with the exit status saying so (exitAlreadyFinished).
type cancelResult struct {
	JobID     rpcapi.JobID `json:"job_id"`
	Cancelled bool         `json:"cancelled"`
	// State is the job's state when the command ran: queued, or running (it stops at its next
	// step), for a job it cancelled; the final state of one that had finished.
	State rpcapi.JobState `json:"state"`
	// Finished is when a job that could not be cancelled had finished.
	Finished *time.Time `json:"finished,omitempty"`
}

// paramsGenResult is `params gen --json`.
type paramsGenResult struct {
	Proof string `json:"proof"` // empty with --srs alone
	Dir   string `json:"dir"`
	Base  string `json:"base"` // file name without .params, .vk, .meta
	// AlreadyPresent: --if-missing found every file, so nothing was generated.
	AlreadyPresent bool            `json:"already_present"`
	Files          []paramFileSize `json:"files,omitempty"`
	TotalSec       float64         `json:"total_s,omitempty"`
	Steps          []genStepTime   `json:"steps,omitempty"`
	// SRS is the devnet SnarkPack SRS that --srs wrote.
	SRS *srsGenResult `json:"srs,omitempty"`
}

// srsGenResult is the devnet SnarkPack SRS of `params gen --srs`.
type srsGenResult struct {
	File string `json:"file"`
	// MaxProofs is the most proofs one aggregate with it holds (0 when AlreadyPresent).
	MaxProofs      int     `json:"max_proofs,omitempty"`
	Bytes          int64   `json:"bytes"`
	AlreadyPresent bool    `json:"already_present"`
	TotalSec       float64 `json:"total_s,omitempty"`
}

type paramFileSize struct {
	File  string `json:"file"`
	Bytes int64  `json:"bytes"`
}

type genStepTime struct {
	Step string  `json:"step"`
	Sec  float64 `json:"s"`
}

// journalCheckResult is `journal check --json`; a damaged journal still exits 1.
type journalCheckResult struct {
	File     string   `json:"file"`
	Exists   bool     `json:"exists"`
	Intact   bool     `json:"intact"`
	Jobs     int      `json:"jobs"`
	Bytes    int64    `json:"bytes"`
	Problems []string `json:"problems"`
}

// journalRepairResult is `journal repair --json`.
type journalRepairResult struct {
	File string `json:"file"`
	// Repaired is false when the journal was intact and left as it was.
	Repaired   bool          `json:"repaired"`
	Problems   []string      `json:"problems"`
	BrokenPath string        `json:"broken_path,omitempty"`
	Recovered  int           `json:"recovered"`
	Lost       []lostJobJSON `json:"lost"`
	// Unknown says why more jobs than Lost may be gone.
	Unknown string `json:"unknown,omitempty"`
}

type lostJobJSON struct {
	ID     rpcapi.JobID `json:"id"`
	Reason string       `json:"reason"`
}

// demoSealResult is `demo seal --json`.
type demoSealResult struct {
	Proof   string  `json:"proof"`
	Miner   uint64  `json:"miner"`
	Sector  uint64  `json:"sector"`
	Out     string  `json:"out"`
	TookSec float64 `json:"took_s"`
}

// jsonSeconds is d in seconds, rounded to the millisecond, for JSON results.
func jsonSeconds(d time.Duration) float64 { return d.Round(time.Millisecond).Seconds() }

// newTokenResult describes tok, minted for the command's --perm (already checked by mint).
func newTokenResult(c *cli.Context, tok string) tokenResult {
	perm := rpcapi.Permission(c.String("perm"))
	allow, _ := rpcapi.PermsUpTo(perm)
	return tokenResult{Token: tok, Perm: perm, Allow: allow}
}

// newAPIInfoResult describes the TOKEN:MULTIADDR pair `auth api-info` prints.
func newAPIInfoResult(c *cli.Context, tok, multiaddr string) apiInfoResult {
	t := newTokenResult(c, tok)
	return apiInfoResult{APIInfo: tok + ":" + multiaddr, Token: tok, Multiaddr: multiaddr, Perm: t.Perm, Allow: t.Allow}
}
