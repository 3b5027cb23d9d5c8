package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/snarkd/snarkd/filecoin/paramfetch"
	"github.com/snarkd/snarkd/filecoin/prooftypes"
	"github.com/snarkd/snarkd/gpu"
)

var sizesFlag = &cli.StringSliceFlag{Name: "sizes", Usage: "sector sizes whose circuits to take (2KiB, 8MiB, 512MiB, 32GiB, 64GiB; comma-separated or repeated)"}

var parametersJSONFlag = &cli.StringFlag{Name: "parameters-json", Usage: "a parameters.json to use instead of the published one built into snarkd (a private mirror's)"}

// paramSelection is the parameter files a params command works on.
type paramSelection struct {
	circuits []filCircuit
	srs      bool // the SnarkPack SRS files
	all      bool // every file of the table
	explicit bool // chosen by flags (else: every circuit, needed by size)
}

// selectParams reads --proof, --sizes, --all and --srs.
func selectParams(c *cli.Context) (paramSelection, error) {
	var sel paramSelection
	sel.all, sel.srs = c.Bool("all"), c.Bool("srs") || c.Bool("all")
	seen := map[string]bool{}
	add := func(f filCircuit) {
		if !seen[f.Base] {
			seen[f.Base] = true
			sel.circuits = append(sel.circuits, f)
		}
	}
	for _, name := range c.StringSlice("proof") {
		for _, n := range strings.Split(name, ",") {
			f, err := parseCircuit(strings.TrimSpace(n))
			if err != nil {
				return sel, usage(err)
			}
			add(f)
		}
	}
	for _, s := range c.StringSlice("sizes") {
		for _, label := range strings.Split(s, ",") {
			size, err := parseSectorSize(strings.TrimSpace(label))
			if err != nil {
				return sel, usage(err)
			}
			for _, f := range filCircuits() {
				if f.SectorSize == size {
					add(f)
				}
			}
		}
	}
	if sel.all {
		for _, f := range filCircuits() {
			add(f)
		}
	}
	sel.explicit = len(sel.circuits) > 0 || sel.srs
	return sel, nil
}

// parseSectorSize reads a sector size label (32GiB).
func parseSectorSize(s string) (uint64, error) {
	for _, p := range prooftypes.All() {
		if strings.EqualFold(prooftypes.SectorSizeLabel(p.SectorSize), s) {
			return p.SectorSize, nil
		}
	}
	return 0, fmt.Errorf("unknown sector size %q: want 2KiB, 8MiB, 512MiB, 32GiB or 64GiB", s)
}

// publishedTable is the digest table: --parameters-json, else the published one.
func publishedTable(c *cli.Context) (map[string]prooftypes.Published, string, error) {
	path := c.String("parameters-json")
	if path == "" {
		return prooftypes.PublishedFiles, "the published parameters.json", nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, "", fmt.Errorf("reading --parameters-json: %w", err)
	}
	t, err := prooftypes.ParsePublished(b)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", path, err)
	}
	return t, path, nil
}

// srsNames are the table's SRS files.
func srsNames(table map[string]prooftypes.Published) []string {
	var out []string
	for name := range table {
		if strings.HasSuffix(name, ".srs") {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

func paramsFetchCommand() *cli.Command {
	return &cli.Command{
		Name:  "fetch",
		Usage: "download the published parameter files (from an IPFS gateway or an HTTP mirror), verified by digest",
		Description: "Downloads the .params and .vk files of the chosen circuits into the parameter directory, four at a\n" +
			"time, resuming interrupted transfers (name.partial), and gives a file its final name only once its\n" +
			"digest is the published one. Files already there with the published digest are kept. The\n" +
			"directory's fetch.lock (the one `lotus fetch-params` takes) keeps two fetches apart.\n\n" +
			"The gateway is --gateway, else $IPFS_GATEWAY, else " + paramfetch.DefaultGateway + "; --mirror\n" +
			"names an HTTP directory that serves the files by name instead.",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "proof", Usage: circuitFlagUsage + " (comma-separated or repeated)"},
			sizesFlag,
			&cli.BoolFlag{Name: "all", Usage: "every published file (every size, the SRS included)"},
			&cli.BoolFlag{Name: "srs", Usage: "also the SnarkPack inner-product SRS (aggregation, NI-PoRep)"},
			paramDirFlag,
			&cli.StringFlag{Name: "gateway", Usage: "IPFS gateway URL, the file's CID appended (default $" + paramfetch.GatewayEnv + ", else " + paramfetch.DefaultGateway + ")"},
			&cli.StringFlag{Name: "mirror", Usage: "HTTP URL of a directory that serves the files by name (replaces the gateway)"},
			&cli.IntFlag{Name: "parallel", Value: 4, Usage: "files downloaded at once"},
			&cli.BoolFlag{Name: "force", Usage: "replace files that exist under a published name with another digest (devnet parameters)"},
			parametersJSONFlag,
			&cli.BoolFlag{Name: "progress", Usage: "draw the progress bar even when stderr is not a terminal"},
			jsonFlag,
		},
		Action: paramsFetch,
	}
}

func paramsFetch(c *cli.Context) error {
	sel, err := selectParams(c)
	if err != nil {
		return err
	}
	if !sel.explicit {
		return usagef("say what to fetch: --sizes 32GiB, --proof NAME, --srs or --all")
	}
	table, source, err := publishedTable(c)
	if err != nil {
		return err
	}
	var files []paramfetch.File
	for _, f := range sel.circuits {
		for _, name := range []string{f.Base + ".vk", f.Base + ".params"} {
			p, ok := table[name]
			if !ok {
				return fmt.Errorf("%s (%s) is not in %s", name, f.Label, source)
			}
			files = append(files, paramfetch.File{Name: name, Published: p})
		}
	}
	if sel.srs {
		names := srsNames(table)
		if len(names) == 0 {
			return fmt.Errorf("%s lists no SRS file", source)
		}
		for _, name := range names {
			files = append(files, paramfetch.File{Name: name, Published: table[name]})
		}
	}
	dir, err := paramDir(c)
	if err != nil {
		return err
	}
	o := paramfetch.Options{Dir: dir, Gateway: c.String("gateway"), Mirror: c.String("mirror"),
		Parallel: c.Int("parallel"), Force: c.Bool("force")}
	from := o.URL(paramfetch.File{Name: "NAME", Published: prooftypes.Published{CID: "CID"}})
	fmt.Fprintf(c.App.ErrWriter, "fetching %d file(s) into %s from %s\n", len(files), dir, from)
	prog := newProgressOut(c)
	o.Progress = func(s paramfetch.Snapshot) {
		// One step for the whole fetch: off a terminal, a line every progressLogEvery.
		prog.show("", fetchFraction(s), fetchProgressLine(s))
	}
	t0 := time.Now()
	res, ferr := paramfetch.Fetch(c.Context, o, files)
	prog.end()
	if c.Bool("json") {
		if err := printJSON(c, res); err != nil {
			return err
		}
	} else {
		counts := map[paramfetch.Status]int{}
		var fetched int64
		for _, r := range res {
			counts[r.Status]++
			fetched += r.Downloaded
			line := fmt.Sprintf("%-8s %9s %s", r.Status, gpu.FormatBytes(uint64(r.Bytes)), r.Name)
			if r.Error != "" {
				line += ": " + r.Error
			}
			fmt.Fprintln(c.App.Writer, line)
		}
		fmt.Fprintf(c.App.Writer, "%d file(s) in %s: %d fetched (%s downloaded), %d already present, %d failed, in %s\n",
			len(res), dir, counts[paramfetch.StatusFetched], gpu.FormatBytes(uint64(fetched)), counts[paramfetch.StatusPresent],
			counts[paramfetch.StatusFailed]+counts[paramfetch.StatusMismatch], time.Since(t0).Round(time.Second))
	}
	if ferr != nil {
		return cli.Exit(fmt.Sprintf("fetch failed: %v", ferr), exitFailed)
	}
	return nil
}

// fetchProgressLine is one line of fetch progress.
func fetchProgressLine(s paramfetch.Snapshot) string {
	if s.WaitingForLock {
		return fmt.Sprintf("waiting for another fetch (%s held) %s", paramfetch.LockFile, s.Elapsed.Round(time.Second))
	}
	rate := float64(s.Bytes) / max(s.Elapsed.Seconds(), 0.001)
	line := fmt.Sprintf("%d/%d files, %s of %s, %s/s", s.Done+s.Failed, s.Files, gpu.FormatBytes(uint64(s.Bytes)), gpu.FormatBytes(uint64(s.Total)), gpu.FormatBytes(uint64(rate)))
	if s.Total > s.Bytes && rate > 0 {
		line += ", ETA " + (time.Duration(float64(s.Total-s.Bytes)/rate) * time.Second).Round(time.Second).String()
	}
	if len(s.Active) > 0 {
		line += ", at " + shortParamName(s.Active[0])
		if len(s.Active) > 1 {
			line += fmt.Sprintf(" (+%d)", len(s.Active)-1)
		}
	}
	return line
}

// fetchFraction is the bar's fill: the bytes of the files whose size is known.
func fetchFraction(s paramfetch.Snapshot) float64 {
	if s.Total <= 0 {
		return 0
	}
	return float64(min(s.Bytes, s.Total)) / float64(s.Total)
}

// shortParamName shortens a parameter file name for a progress line (the identifier hash cut).
func shortParamName(name string) string {
	ext := filepath.Ext(name)
	base := strings.TrimSuffix(name, ext)
	if i := strings.LastIndexByte(base, '-'); i > 0 && len(base)-i > 12 {
		base = base[:i+9] + "…"
	}
	return base + ext
}
