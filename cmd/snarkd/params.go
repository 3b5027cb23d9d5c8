package main

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/filecoin-project/go-state-types/abi"
	"github.com/urfave/cli/v2"

	"github.com/snarkd/snarkd/filecoin/prooftypes"
	"github.com/snarkd/snarkd/gpu"
	"github.com/snarkd/snarkd/groth16"
	"github.com/snarkd/snarkd/groth16/snarkpack"
	"github.com/snarkd/snarkd/internal/atomicfile"
)

// DevnetSealParamSeed is the default seed of `snarkd params gen`. Everyone knows it, so
// parameters made from it protect nothing: they are for devnets and tests.
const DevnetSealParamSeed = "snarkd devnet porep parameters v1"

var paramDirFlag = &cli.StringFlag{
	Name:  "dir",
	Usage: "parameter directory (default: Prover.ParameterCache, i.e. $FIL_PROOFS_PARAMETER_CACHE or /var/tmp/filecoin-proof-parameters)",
}

var proofFlagUsage = "seal proof type: a name (StackedDrg2KiBV1_1), its number (5) or a sector size (2KiB, 32GiB)"

var circuitFlagUsage = proofFlagUsage + "; a PoSt proof type name (StackedDrgWinning2KiBV1, StackedDrgWindow32GiBV1_1); " +
	"or a SnapDeals circuit (UpdateStackedDrg2KiBV1, UpdatePoseidonStackedDrg32GiBV1)"

// parseSealProof accepts a proof type name, its abi number, or a sector size label (the V1_1
// type of that size: all interactive, synthetic and NI types of one size share its circuit).
func parseSealProof(s string) (*prooftypes.SealProof, error) {
	if p, err := prooftypes.LookupName(s); err == nil {
		return p, nil
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return prooftypes.Lookup(abi.RegisteredSealProof(n))
	}
	for _, p := range prooftypes.All() {
		if strings.EqualFold(prooftypes.SectorSizeLabel(p.SectorSize), s) {
			return prooftypes.ForSectorSize(p.SectorSize)
		}
	}
	return nil, fmt.Errorf("unknown seal proof type %q: want a name such as StackedDrg2KiBV1_1, its number, or a sector size (2KiB, 8MiB, 512MiB, 32GiB, 64GiB)", s)
}

// distinctCircuits returns one proof type per parameter file (the V1_1 type where several share
// it), in sector size order.
func distinctCircuits() []*prooftypes.SealProof {
	seen := map[string]bool{}
	var out []*prooftypes.SealProof
	for _, p := range prooftypes.All() {
		if p.Feature != prooftypes.Interactive || p.APIVersion != prooftypes.APIVersion1_1_0 || seen[p.ParamsFile()] {
			continue
		}
		seen[p.ParamsFile()] = true
		out = append(out, p)
	}
	// NI-PoRep types whose partition circuit differs (other challenge counts) get their own row.
	for _, p := range prooftypes.All() {
		if !seen[p.ParamsFile()] {
			seen[p.ParamsFile()] = true
			out = append(out, p)
		}
	}
	return out
}

// paramDir resolves the parameter directory: --dir, else the configuration.
func paramDir(c *cli.Context) (string, error) {
	if d := c.String("dir"); d != "" {
		return filepath.Abs(d)
	}
	repo, err := repoPath(c)
	if err != nil {
		return "", err
	}
	cfg, err := loadConfig(c, repo)
	if err != nil {
		return "", err
	}
	return cfg.Prover.ParameterCache, nil
}

func paramsCommand() *cli.Command {
	return &cli.Command{
		Name:  "params",
		Usage: "Filecoin parameter files: fetch the published ones, check them against their digests, generate devnet ones",
		Subcommands: []*cli.Command{
			{
				Name:  "gen",
				Usage: "generate INSECURE devnet parameters for a PoRep, PoSt or SnapDeals proof type, or a devnet SnarkPack SRS (devnets and tests only)",
				Description: "Runs a Groth16 setup of the proof type's (partition) circuit from a public seed and writes the .params,\n" +
					".vk and .meta files under Filecoin's file names into the parameter directory. With --srs it also\n" +
					"(or, without --proof, only) writes a devnet SnarkPack SRS under the published SRS's file name, which\n" +
					"NI-PoRep C2 aggregates its partition proofs with. Anyone who knows the seed can forge proofs with\n" +
					"them: they are for devnets and tests only, never for mainnet or calibnet, whose chains verify with\n" +
					"the published parameters and SRS of Filecoin's trusted setups.",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "proof", Usage: circuitFlagUsage + " (required unless --srs)"},
					&cli.BoolFlag{Name: "srs", Usage: "write a devnet SnarkPack SRS (" + snarkpack.SRSFile + ")"},
					&cli.IntFlag{Name: "srs-proofs", Value: defaultSRSProofs, Usage: fmt.Sprintf("the most proofs one aggregate with the devnet SRS holds: a power of two, 2..%d (NI-PoRep: 16 at 2KiB to 512MiB, 128 at 32GiB and 64GiB)", snarkpack.MaxProofs)},
					paramDirFlag,
					&cli.StringFlag{Name: "seed", Value: DevnetSealParamSeed, Usage: "setup seed (public: the parameters are insecure whatever it is)"},
					&cli.BoolFlag{Name: "force", Usage: "overwrite existing parameter files"},
					&cli.BoolFlag{Name: "if-missing", Usage: "do nothing (and succeed) when the .params, .vk and .meta files exist"},
					&cli.StringFlag{Name: "cpuprofile", Usage: "write a CPU profile of the setup to this file"},
					&cli.BoolFlag{Name: "progress", Usage: "draw the progress line even when stderr is not a terminal"},
					jsonFlag,
				},
				Action: paramsGen,
			},
			paramsFetchCommand(),
			{
				Name:  "check",
				Usage: "verify the parameter directory's files against the published parameters.json digests; non-zero exit when a needed file is missing or wrong",
				Description: "Without a selection, every sector size with at least one file in the directory is needed in full\n" +
					"(its PoRep, PoSt and SnapDeals circuits), the other sizes are skipped, and an empty directory fails.",
				Flags: []cli.Flag{
					&cli.StringSliceFlag{Name: "proof", Usage: circuitFlagUsage + " (comma-separated or repeated)"},
					sizesFlag,
					&cli.BoolFlag{Name: "all", Usage: "every published file"},
					&cli.BoolFlag{Name: "srs", Usage: "require the SnarkPack inner-product SRS too"},
					paramDirFlag,
					parametersJSONFlag,
					jsonFlag,
				},
				Action: paramsCheck,
			},
		},
	}
}

// defaultSRSProofs is what `params gen --srs` sizes a devnet SRS for: an aggregate of 8192
// proofs, enough for NI-PoRep of any sector size and for aggregating hundreds of sectors' C2
// proofs (filecoin-proofs aggregates at most 819 sectors: 8190 proofs of 10 partitions).
const defaultSRSProofs = 8192

func paramsGen(c *cli.Context) error {
	if c.String("proof") == "" && !c.Bool("srs") {
		return usagef("say what to generate: --proof NAME (a circuit's parameters), --srs (a devnet SnarkPack SRS) or both")
	}
	var p filCircuit
	if c.String("proof") != "" {
		var err error
		if p, err = parseCircuit(c.String("proof")); err != nil {
			return usage(err)
		}
	}
	srsProofs := c.Int("srs-proofs")
	switch {
	case c.IsSet("srs-proofs") && !c.Bool("srs"):
		return usagef("--srs-proofs sizes the SRS that --srs writes: pass --srs too")
	case c.Bool("srs") && (srsProofs < 2 || srsProofs > snarkpack.MaxProofs || srsProofs&(srsProofs-1) != 0):
		return usagef("--srs-proofs %d: want a power of two, 2..%d", srsProofs, snarkpack.MaxProofs)
	}
	dir, err := paramDir(c)
	if err != nil {
		return err
	}
	// Whatever is already there is refused before any work starts.
	if c.Bool("srs") && !c.Bool("force") && !c.Bool("if-missing") {
		if path := filepath.Join(dir, snarkpack.SRSFile); fileExists(path) {
			return fmt.Errorf("%s exists; pass --force to overwrite it", path)
		}
	}
	res := paramsGenResult{Dir: dir}
	var lines []string
	if p.Name != "" {
		line, err := genCircuitParams(c, p, dir, &res)
		if err != nil {
			return err
		}
		lines = append(lines, line)
	}
	if c.Bool("srs") {
		sr, line, err := genDevnetSRS(c, dir, srsProofs)
		if err != nil {
			return err
		}
		res.SRS = sr
		lines = append(lines, line)
	}
	return printResult(c, res, func(w io.Writer) {
		for _, l := range lines {
			fmt.Fprintln(w, l)
		}
	})
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// genDevnetSRS writes a devnet SnarkPack SRS for up to maxProofs proofs into dir under
// snarkpack.SRSFile, its powers derived from --seed; with --if-missing (and no --force) an
// existing file is kept.
func genDevnetSRS(c *cli.Context, dir string, maxProofs int) (*srsGenResult, string, error) {
	path := filepath.Join(dir, snarkpack.SRSFile)
	if fi, err := os.Stat(path); err == nil && c.Bool("if-missing") && !c.Bool("force") {
		return &srsGenResult{File: snarkpack.SRSFile, AlreadyPresent: true, Bytes: fi.Size()},
			fmt.Sprintf("SnarkPack SRS already in %s", dir), nil
	}
	fmt.Fprintf(c.App.ErrWriter, "WARNING: a devnet SnarkPack SRS is INSECURE (public seed): for devnets and tests only\n")
	t0 := time.Now()
	h := sha256.Sum256([]byte(c.String("seed")))
	s, err := snarkpack.DevnetSRS(c.Context, maxProofs, binary.LittleEndian.Uint64(h[:8]))
	if err != nil {
		return nil, "", fmt.Errorf("devnet SnarkPack SRS for %d proofs: %w", maxProofs, err)
	}
	if err := atomicfile.Write(path, 0o644, func(w io.Writer) error {
		_, err := s.WriteTo(w)
		return err
	}); err != nil {
		return nil, "", fmt.Errorf("writing the devnet SnarkPack SRS: %w", err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, "", err
	}
	took := time.Since(t0)
	tookText := fmtElapsed(took)
	if took < time.Second {
		tookText = took.Round(time.Millisecond).String()
	}
	res := &srsGenResult{File: snarkpack.SRSFile, MaxProofs: maxProofs, Bytes: fi.Size(), TotalSec: jsonSeconds(took)}
	return res, fmt.Sprintf("wrote %s (%s, aggregates up to %d proofs) in %s; took %s", snarkpack.SRSFile,
		gpu.FormatBytes(uint64(fi.Size())), maxProofs, dir, tookText), nil
}

// genCircuitParams runs `params gen --proof`: the setup of p's circuit into dir, recorded in res;
// it returns the summary line.
func genCircuitParams(c *cli.Context, p filCircuit, dir string, res *paramsGenResult) (string, error) {
	res.Proof, res.Base = p.Name, p.Base
	path := filepath.Join(dir, p.Base+".params")
	if c.Bool("if-missing") && !c.Bool("force") {
		complete := true
		for _, f := range []string{p.Base + ".params", p.Base + ".vk", p.Base + ".meta"} {
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				complete = false
			}
		}
		if complete {
			res.AlreadyPresent, res.Files = true, paramFileSizes(dir, p.Base)
			return fmt.Sprintf("%s parameters already in %s", p.Name, dir), nil
		}
	}
	if _, err := os.Stat(path); err == nil && !c.Bool("force") {
		return "", fmt.Errorf("%s exists; pass --force to overwrite it", path)
	}
	stopProfile, err := startCPUProfile(c.String("cpuprofile"))
	if err != nil {
		return "", err
	}
	defer stopProfile()
	fmt.Fprintf(c.App.ErrWriter, "WARNING: devnet parameters are INSECURE (public seed): for devnets and tests only\n")
	fmt.Fprintf(c.App.ErrWriter, "setup of the %s %s circuit…\n", p.Name, p.Family)
	prog := newProgressOut(c)
	show := func(pr groth16.SetupProgress) {
		if pr.Step != "" {
			prog.show(string(pr.Step), setupFraction(pr), setupProgressLine(p.Name, pr))
		}
	}
	// Every step is shown when it begins (off a terminal: one log line each), then redrawn
	// every second while it runs.
	tr := &groth16.SetupTracker{OnStep: show}
	stop := prog.every(time.Second, func() { show(tr.Progress()) })
	defer stop()
	ctx := groth16.WithSetupTracker(c.Context, tr)
	t0 := time.Now()
	// The setup's batch multiplications do not watch the context, so an interrupt returns here at
	// once instead of after them; nothing has been written yet.
	type result struct {
		pk  *groth16.Parameters
		err error
	}
	done := make(chan result, 1)
	go func() {
		pk, err := p.setup(ctx, []byte(c.String("seed")))
		done <- result{pk, err}
	}()
	var pk *groth16.Parameters
	select {
	case r := <-done:
		if r.err != nil {
			return "", r.err
		}
		pk = r.pk
	case <-c.Context.Done():
		return "", fmt.Errorf("setup of %s interrupted; nothing written: %w", p.Name, c.Context.Err())
	}
	if p.Seal != nil { // the only family whose parameters get checked after the setup
		tr.Begin(genStepCheck, 0)
		if err := p.check(ctx, pk); err != nil {
			return "", err
		}
	}
	tr.Begin(genStepWrite, 0)
	if err := p.write(dir, pk); err != nil {
		return "", fmt.Errorf("writing parameters into %s: %w", dir, err)
	}
	tr.End()
	stop()
	total, steps := time.Since(t0), tr.Steps()
	res.Files, res.TotalSec = paramFileSizes(dir, p.Base), jsonSeconds(total)
	for _, s := range steps {
		res.Steps = append(res.Steps, genStepTime{Step: string(s.Step), Sec: jsonSeconds(s.Took)})
	}
	return genSummary(dir, p.Base, res.Files, total, steps), nil
}

// paramFileSizes lists the .params, .vk and .meta files of base in dir that exist, with sizes.
func paramFileSizes(dir, base string) []paramFileSize {
	var out []paramFileSize
	for _, ext := range []string{".params", ".vk", ".meta"} {
		if fi, err := os.Stat(filepath.Join(dir, base+ext)); err == nil {
			out = append(out, paramFileSize{File: base + ext, Bytes: fi.Size()})
		}
	}
	return out
}

// Steps of `params gen` after the setup's own (groth16.SetupStep).
const (
	genStepCheck groth16.SetupStep = "checking"
	genStepWrite groth16.SetupStep = "writing files"
)

// setupFraction is the bar's fill for a setup step, negative for one that cannot be counted.
func setupFraction(pr groth16.SetupProgress) float64 {
	if pr.Total <= 0 {
		return -1
	}
	return float64(pr.Done) / float64(pr.Total)
}

// setupUnits names what a setup step counts.
func setupUnits(step groth16.SetupStep) string {
	if step == groth16.SetupEvaluation {
		return "matrix rows"
	}
	return "points"
}

// setupProgressLine is one line of `params gen` progress: the circuit, the step, its counts
// where the step has any, the step's time and the whole setup's.
func setupProgressLine(name string, pr groth16.SetupProgress) string {
	line := name + ": " + string(pr.Step)
	if pr.Total > 0 {
		line += fmt.Sprintf(" %s/%s %s (%.0f%%)", fmtCount(pr.Done), fmtCount(pr.Total), setupUnits(pr.Step), 100*float64(pr.Done)/float64(pr.Total))
	}
	line += ", " + fmtElapsed(time.Since(pr.StepStarted))
	if !pr.Started.Equal(pr.StepStarted) {
		line += " (total " + fmtElapsed(time.Since(pr.Started)) + ")"
	}
	return line
}

// genSummary is the last line of `params gen`: the files written with their sizes, the total
// time and each step's.
func genSummary(dir, base string, written []paramFileSize, total time.Duration, steps []groth16.SetupStepTime) string {
	var files []string
	for _, f := range written {
		files = append(files, strings.TrimPrefix(f.File, base)+" ("+gpu.FormatBytes(uint64(f.Bytes))+")")
	}
	var parts []string
	for _, s := range steps {
		parts = append(parts, fmt.Sprintf("%s %s", s.Step, fmtElapsed(s.Took)))
	}
	return fmt.Sprintf("wrote %s %s in %s; took %s: %s", base, strings.Join(files, ", "), dir, fmtElapsed(total), strings.Join(parts, ", "))
}

// paramCheck is one parameter file's verdict.
type paramCheck struct {
	Proof  string `json:"proof"`
	File   string `json:"file"`
	Status string `json:"status"` // ok, missing, mismatch, error, present (no published digest to check)
	Detail string `json:"detail,omitempty"`
}

func paramsCheck(c *cli.Context) error {
	sel, err := selectParams(c)
	if err != nil {
		return err
	}
	circuits := sel.circuits
	if !sel.explicit {
		circuits = filCircuits()
	}
	table, source, err := publishedTable(c)
	if err != nil {
		return err
	}
	dir, err := paramDir(c)
	if err != nil {
		return err
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		if err == nil {
			err = errors.New("not a directory")
		}
		return cli.Exit(fmt.Sprintf("parameter directory %s: %v; point --dir, Prover.ParameterCache or FIL_PROOFS_PARAMETER_CACHE at "+
			"the directory `snarkd params fetch` (or `lotus fetch-params`) fills, or create devnet parameters there with "+
			"`snarkd params gen --proof 2KiB --dir %s`", dir, err, dir), exitFailed)
	}
	type entry struct {
		r    paramCheck
		size uint64
	}
	var rows []entry
	check := func(label, name string, size uint64, srs bool) {
		r := paramCheck{Proof: label, File: name}
		_, statErr := os.Stat(filepath.Join(dir, name))
		switch {
		case errors.Is(statErr, fs.ErrNotExist):
			r.Status = "missing"
		case statErr != nil:
			r.Status, r.Detail = "error", statErr.Error()
		default:
			want, ok := table[name]
			if !ok {
				r.Status, r.Detail = "present", "unverified: not in "+source
				break
			}
			if err := prooftypes.CheckFile(dir, name, want.Digest); err != nil {
				var dm *prooftypes.DigestMismatchError
				if errors.As(err, &dm) {
					devnet := "devnet parameters from `snarkd params gen` are not the published ones"
					if srs {
						devnet = "a devnet SRS from `snarkd params gen --srs` is not the published one"
					}
					r.Status, r.Detail = "mismatch", fmt.Sprintf("digest %s, published %s (%s)", dm.Got, dm.Want, devnet)
				} else {
					r.Status, r.Detail = "error", err.Error()
				}
			} else {
				r.Status = "ok"
			}
		}
		if srs {
			size = 0
		}
		rows = append(rows, entry{r, size})
	}
	for _, p := range circuits {
		for _, name := range []string{p.Base + ".vk", p.Base + ".params"} {
			check(p.Label, name, p.SectorSize, false)
		}
	}
	for _, name := range srsNames(table) {
		if _, err := os.Stat(filepath.Join(dir, name)); sel.srs || err == nil {
			check("SRS", name, 0, true)
		}
	}
	// Without a selection, a sector size is needed once any of its files is there: every
	// circuit of that size then is (the miner proves all of them), the other sizes are skipped.
	needed := map[uint64]bool{}
	for _, e := range rows {
		if e.r.Status != "missing" || sel.explicit || e.size == 0 {
			needed[e.size] = true
		}
	}
	var out []paramCheck
	skippedSizes := map[uint64]bool{}
	counts := map[string]int{}
	for _, e := range rows {
		if !sel.explicit && !needed[e.size] {
			skippedSizes[e.size] = true
			continue
		}
		out = append(out, e.r)
		counts[e.r.Status]++
	}
	var skipped []string
	for _, size := range slices.Sorted(maps.Keys(skippedSizes)) {
		skipped = append(skipped, prooftypes.SectorSizeLabel(size))
	}
	bad := counts["mismatch"] + counts["error"]
	missing := counts["missing"]
	if c.Bool("json") {
		if err := printJSON(c, out); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(c.App.Writer, "parameter directory %s (digests from %s)\n", dir, source)
		for _, r := range out {
			line := fmt.Sprintf("%-8s %-6s %s", r.Status, r.Proof, r.File)
			if r.Detail != "" {
				line += ": " + r.Detail
			}
			fmt.Fprintln(c.App.Writer, line)
		}
		fmt.Fprintln(c.App.Writer, checkSummary(len(out), counts))
		if len(skipped) > 0 && len(out) > 0 {
			fmt.Fprintf(c.App.Writer, "no files of %s: not checked (--sizes or --proof requires them)\n", strings.Join(skipped, ", "))
		}
	}
	switch {
	case len(out) == 0:
		return cli.Exit(fmt.Sprintf("check failed: no parameter files in %s; `snarkd params fetch --sizes 32GiB --dir %s` downloads the published ones, "+
			"`snarkd params gen --proof 2KiB --dir %s` makes INSECURE devnet ones", dir, dir, dir), exitFailed)
	case bad > 0:
		return cli.Exit(fmt.Sprintf("check failed: %d parameter file(s) in %s are not the published ones or could not be read", bad, dir), exitFailed)
	case missing > 0:
		return cli.Exit(fmt.Sprintf("check failed: %d parameter file(s) missing from %s (`snarkd params fetch` with the same selection downloads them)", missing, dir), exitFailed)
	}
	return nil
}

// checkSummary is the last line of `params check`: how many files had each verdict.
func checkSummary(total int, counts map[string]int) string {
	parts := []string{}
	for _, st := range []string{"ok", "present", "missing", "mismatch", "error"} {
		if n := counts[st]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, st))
		}
	}
	if len(parts) == 0 {
		parts = append(parts, "nothing to check")
	}
	return fmt.Sprintf("%d file(s): %s", total, strings.Join(parts, ", "))
}
