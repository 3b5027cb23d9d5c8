package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/filecoin-project/go-state-types/abi"
	"github.com/urfave/cli/v2"

	"github.com/snarkd/snarkd/plugin"
	"github.com/snarkd/snarkd/plugin/auth"
	"github.com/snarkd/snarkd/rpcapi"
)

func statusCommand() *cli.Command {
	return &cli.Command{
		Name:  "status",
		Usage: "show the daemon's devices, queues, parameters and miner registration",
		Flags: []cli.Flag{apiInfoFlag, jsonFlag},
		Action: func(c *cli.Context) error {
			api, closer, err := proverClient(c, false)
			if err != nil {
				return err
			}
			defer closer()
			st, err := api.Status(c.Context)
			if err != nil {
				return err
			}
			if c.Bool("json") {
				return printJSON(c, st)
			}
			w := c.App.Writer
			fmt.Fprintf(w, "snarkd %s, backend %s, up %s\n", st.Version, st.Backend, time.Since(st.StartedAt).Round(time.Second))
			fmt.Fprintf(w, "jobs: %d completed, %d failed, %d cancelled\n", st.Completed, st.Failed, st.Cancelled)
			if st.Draining != nil {
				printDrain(w, st.Draining, time.Now())
			}
			tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "DEVICE\tVRAM TOTAL\tVRAM FREE\tWORKERS BUSY")
			for _, d := range st.Devices {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d/%d\n", d.Name, size(d.VRAMTotal), size(d.VRAMFree), d.WorkersBusy, d.Workers)
			}
			fmt.Fprintln(tw, "\nKIND\tQUEUED\tRUNNING\t")
			for _, q := range st.Queues {
				fmt.Fprintf(tw, "%s\t%d\t%d\t\n", q.Kind, q.Queued, q.Running)
			}
			tw.Flush()
			printGPUs(w, st.Devices)
			for _, p := range st.Params {
				if p.Loaded {
					fmt.Fprintf(w, "parameters %s: %s loaded\n", p.Circuit, size(p.Bytes))
				} else if p.Bytes > 0 {
					fmt.Fprintf(w, "parameters %s: loading (%s on disk)\n", p.Circuit, size(p.Bytes))
				} else {
					fmt.Fprintf(w, "parameters %s: loading or generating\n", p.Circuit)
				}
			}
			if m := st.Miner; m != nil {
				state := "connected"
				if !m.Connected {
					state = "NOT connected: " + m.LastError
				}
				fmt.Fprintf(w, "lotus-miner %s (session %s): %s; it dials %s\n", m.URL, m.Session, state, m.WorkerURL)
			} else {
				fmt.Fprintln(w, "lotus-miner: none (snarkd worker connect --miner-api-info TOKEN:MULTIADDR)")
			}
			return nil
		},
	}
}

// printGPUs prints the GPU scheduler's view of each GPU (devices with tier counts): its books,
// the plans granted per tier and what each worker runs.
func printGPUs(w io.Writer, devs []rpcapi.DeviceStatus) {
	for _, d := range devs {
		if d.Tiers == nil {
			continue // the CPU backend's device
		}
		tiers := make([]string, 0, len(d.Tiers))
		for _, t := range []string{"full", "partial", "minimal"} {
			tiers = append(tiers, fmt.Sprintf("%s %d", t, d.Tiers[t]))
		}
		for t, n := range d.Tiers {
			if t != "full" && t != "partial" && t != "minimal" {
				tiers = append(tiers, fmt.Sprintf("%s %d", t, n))
			}
		}
		fmt.Fprintf(w, "GPU %d %s: reserved %s of %s (allocated %s, resident %s, headroom %s, other processes %s), %d waiting; plans %s; workers %d/%d busy\n",
			d.Ordinal, d.Name, size0(d.VRAMReserved), size0(d.VRAMLimit), size0(d.VRAMAllocated), size0(d.ResidentBytes),
			size0(d.VRAMHeadroom), size0(d.VRAMOthers), d.Waiting, strings.Join(tiers, ", "), d.WorkersBusy, d.Workers)
		for _, wk := range d.WorkerStates {
			if !wk.Busy {
				fmt.Fprintf(w, "  worker %d: idle\n", wk.ID)
				continue
			}
			srs := "streamed"
			if wk.SRSResident {
				srs = "resident"
			}
			if wk.CompactNTT {
				srs += ", compact NTT tables"
			}
			fmt.Fprintf(w, "  worker %d: job %s partition %d (%s), %s plan, %s, SRS %s\n",
				wk.ID, wk.JobID, wk.Partition, wk.Kind, wk.Tier, size0(wk.Bytes), srs)
		}
		if b := d.Busy; b != nil {
			fmt.Fprintf(w, "  busy %.0f %% of the last minute (%s of kernels since start)", b.Recent*100, seconds(b.Seconds))
			if b.Partitions > 0 {
				fmt.Fprintf(w, "; its %d partitions on average: queued %s, memory %s, other kernels %s, kernels %s, run %s",
					b.Partitions, seconds(b.Queued), seconds(b.Memory), seconds(b.KernelWait), seconds(b.Kernels), seconds(b.Run))
			}
			fmt.Fprintln(w)
		}
	}
}

// seconds formats a duration in seconds for status lines.
func seconds(s float64) string {
	return time.Duration(s * float64(time.Second)).Round(time.Millisecond).String()
}

// size0 is size with 0 written as such (size writes "-" for unknown).
func size0(b uint64) string {
	if b == 0 {
		return "0 B"
	}
	return size(b)
}

func size(b uint64) string {
	if b == 0 {
		return "-"
	}
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	f := float64(b)
	i := 0
	for f >= 1024 && i < len(units)-1 {
		f /= 1024
		i++
	}
	return fmt.Sprintf("%.1f %s", f, units[i])
}

func jobsCommand() *cli.Command {
	return &cli.Command{
		Name:  "jobs",
		Usage: "list jobs, newest first",
		Flags: []cli.Flag{apiInfoFlag, jsonFlag,
			&cli.StringSliceFlag{Name: "state", Usage: "only jobs in this state (queued, running, done, failed, cancelled)"},
			&cli.StringSliceFlag{Name: "kind", Usage: "only jobs of this proof kind"},
			&cli.IntFlag{Name: "limit", Value: 50, Usage: "at most this many jobs"},
		},
		Action: func(c *cli.Context) error {
			f, err := jobFilter(c)
			if err != nil {
				return err
			}
			api, closer, err := proverClient(c, false)
			if err != nil {
				return err
			}
			defer closer()
			list, err := api.Jobs(c.Context, f)
			if err != nil {
				return err
			}
			if c.Bool("json") {
				return printJSON(c, list)
			}
			tw := tabwriter.NewWriter(c.App.Writer, 2, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "JOB\tKIND\tSTATE\tPARTS\tSUBMITTED\tTOTAL\tORIGIN\tERROR")
			for _, j := range list {
				total := "-"
				if j.State.Final() {
					total = (time.Duration(j.Timings.TotalMs) * time.Millisecond).String()
				}
				state := string(j.State)
				if j.State == rpcapi.JobRunning && j.Stage != "" {
					state += " (" + string(j.Stage) + ")" // loading-params says why it has not started synthesizing
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d/%d\t%s\t%s\t%s\t%s\n", j.ID, j.Kind, state, j.PartitionsDone, j.Partitions,
					j.Submitted.Local().Format("15:04:05"), total, j.Origin, j.Error)
			}
			return tw.Flush()
		},
	}
}

// jobStates are the values of `jobs --state`.
var jobStates = []rpcapi.JobState{rpcapi.JobQueued, rpcapi.JobRunning, rpcapi.JobDone, rpcapi.JobFailed, rpcapi.JobCancelled}

// jobFilter checks and converts the flags of `jobs`.
func jobFilter(c *cli.Context) (rpcapi.JobFilter, error) {
	f := rpcapi.JobFilter{Limit: c.Int("limit")}
	if f.Limit < 1 {
		return f, usagef("--limit %d: want 1 or more", f.Limit)
	}
	for _, s := range c.StringSlice("state") {
		st := rpcapi.JobState(s)
		if !slices.Contains(jobStates, st) {
			return f, usagef("--state %q: want one of %s", s, joinValues(jobStates))
		}
		f.States = append(f.States, st)
	}
	for _, s := range c.StringSlice("kind") {
		k := rpcapi.ProofKind(s)
		if !slices.Contains(rpcapi.Kinds, k) {
			return f, usagef("--kind %q: want one of %s", s, joinValues(rpcapi.Kinds))
		}
		f.Kinds = append(f.Kinds, k)
	}
	return f, nil
}

// joinValues renders accepted values as "a, b or c".
func joinValues[T ~string](vs []T) string {
	ss := make([]string, len(vs))
	for i, v := range vs {
		ss[i] = string(v)
	}
	if len(ss) < 2 {
		return strings.Join(ss, "")
	}
	return strings.Join(ss[:len(ss)-1], ", ") + " or " + ss[len(ss)-1]
}

func authCommand() *cli.Command {
	perm := &cli.StringFlag{Name: "perm", Value: "read", Usage: "permission: read, write, sign or admin (a token carries the weaker ones too)"}
	mint := func(c *cli.Context) (string, error) {
		repo, err := repoPath(c)
		if err != nil {
			return "", err
		}
		perms, ok := rpcapi.PermsUpTo(rpcapi.Permission(c.String("perm")))
		if !ok {
			return "", usagef("--perm %q: want read, write, sign or admin", c.String("perm"))
		}
		secret, err := auth.LoadOrCreateSecret(repo)
		if err != nil {
			return "", err
		}
		return secret.NewToken(perms)
	}
	return &cli.Command{
		Name:  "auth",
		Usage: "mint API tokens (Lotus JWT format, signed with the repo's secret)",
		Subcommands: []*cli.Command{
			{
				Name:  "create-token",
				Usage: "print a token",
				Flags: []cli.Flag{perm, jsonFlag},
				Action: func(c *cli.Context) error {
					tok, err := mint(c)
					if err != nil {
						return err
					}
					return printResult(c, newTokenResult(c, tok), func(w io.Writer) { fmt.Fprintln(w, tok) })
				},
			},
			{
				Name:  "api-info",
				Usage: "print SNARKD_API_INFO=TOKEN:MULTIADDR for the running daemon",
				Flags: []cli.Flag{perm, jsonFlag},
				Action: func(c *cli.Context) error {
					tok, err := mint(c)
					if err != nil {
						return err
					}
					repo, err := repoPath(c)
					if err != nil {
						return err
					}
					addr, err := readAPIFile(repo)
					if err != nil {
						return err
					}
					return printResult(c, newAPIInfoResult(c, tok, addr), func(w io.Writer) {
						fmt.Fprintf(w, "SNARKD_API_INFO=%s:%s\n", tok, addr)
					})
				},
			},
		},
	}
}

func workerCommand() *cli.Command {
	return &cli.Command{
		Name:  "worker",
		Usage: "the daemon as a Lotus worker: attach it to a lotus-miner, choose its task types, wait for it to be quiet, stop it",
		Subcommands: []*cli.Command{{
			Name:  "connect",
			Usage: "register with a miner (WorkerConnect) and stay registered across miner restarts",
			Flags: []cli.Flag{apiInfoFlag,
				&cli.StringFlag{Name: "miner-api-info", Required: true, EnvVars: []string{"MINER_API_INFO"},
					Usage: "the miner's `TOKEN:MULTIADDR` with an admin token (from lotus-miner auth api-info --perm admin)"},
				&cli.StringFlag{Name: "worker-url", Usage: "URL the miner dials back (default: the daemon's listen address)"},
				jsonFlag,
			},
			Action: func(c *cli.Context) error {
				info, err := rpcapi.ParseAPIInfo(c.String("miner-api-info"))
				if err == nil {
					_, err = info.URL("http")
				}
				if err != nil {
					return usagef("--miner-api-info (MINER_API_INFO): %w (`lotus-miner auth api-info --perm admin` prints it)", err)
				}
				if u := c.String("worker-url"); u != "" && !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
					return usagef("--worker-url %q: want http://host:port/rpc/v0", u)
				}
				api, closer, err := proverClient(c, false)
				if err != nil {
					return err
				}
				defer closer()
				if err := api.MinerAttach(c.Context, c.String("miner-api-info"), c.String("worker-url")); err != nil {
					return err
				}
				st, err := api.Status(c.Context)
				if err != nil {
					return err
				}
				return printResult(c, workerConnectResult{Miner: st.Miner}, func(w io.Writer) {
					if st.Miner != nil {
						fmt.Fprintf(w, "registered with lotus-miner %s (session %s); it dials %s\n", st.Miner.URL, st.Miner.Session, st.Miner.WorkerURL)
					}
				})
			},
		}, workerTasksCommand(), workerWaitQuietCommand(), stopCommand("stop")},
	}
}

// commit2In is the C1-output interchange format of lotus-bench, Curio and gpuproxy.
type commit2In struct {
	SectorNum  int64
	Phase1Out  []byte
	SectorSize uint64
}

// readC1 accepts a Commit2In envelope or a raw C1 output (SealCommitPhase1Output JSON).
func readC1(path string) (phase1 []byte, sector abi.SectorNumber, ssize abi.SectorSize, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, 0, 0, err
	}
	return parseC1(path, data)
}

// parseC1 is readC1 on bytes already read; path only names the input in errors.
func parseC1(path string, data []byte) (phase1 []byte, sector abi.SectorNumber, ssize abi.SectorSize, err error) {
	var v interface{}
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, 0, 0, fmt.Errorf("%s is not JSON: %w", path, err)
	}
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(data, &probe); err != nil {
		return nil, 0, 0, fmt.Errorf("%s holds %s, not a JSON object: want a Commit2In {SectorNum, Phase1Out, SectorSize} or a C1 output (SealCommitPhase1Output JSON)", path, jsonType(v))
	}
	if _, ok := probe["Phase1Out"]; ok {
		var in commit2In
		if err := json.Unmarshal(data, &in); err != nil {
			return nil, 0, 0, fmt.Errorf("%s: bad Commit2In: %w", path, err)
		}
		if in.SectorNum < 0 {
			return nil, 0, 0, fmt.Errorf("%s: negative SectorNum", path)
		}
		if len(in.Phase1Out) == 0 {
			return nil, 0, 0, fmt.Errorf("%s: empty Phase1Out", path)
		}
		return in.Phase1Out, abi.SectorNumber(in.SectorNum), abi.SectorSize(in.SectorSize), nil
	}
	if _, ok := probe["registered_proof"]; ok {
		return data, 0, 0, nil
	}
	return nil, 0, 0, fmt.Errorf("%s is neither a Commit2In {SectorNum, Phase1Out, SectorSize} nor a C1 output", path)
}

// jsonType names the JSON type of a decoded value.
func jsonType(v interface{}) string {
	switch v.(type) {
	case []interface{}:
		return "a JSON array"
	case string:
		return "a JSON string"
	case float64:
		return "a JSON number"
	case bool:
		return "a JSON boolean"
	case nil:
		return "JSON null"
	}
	return "a JSON object"
}

func c2Request(c *cli.Context) (rpcapi.ProofRequest, error) {
	phase1, sector, ssize, err := readC1(c.String("c1"))
	if err != nil {
		return rpcapi.ProofRequest{}, usagef("--c1: %w", err)
	}
	if c.IsSet("sector") {
		sector = abi.SectorNumber(c.Uint64("sector"))
	}
	spt, err := plugin.C1SealProof(phase1)
	if err != nil {
		return rpcapi.ProofRequest{}, usagef("--c1 %s: %w", c.String("c1"), err)
	}
	return rpcapi.ProofRequest{
		RequestID: c.String("request-id"), Kind: rpcapi.KindPoRepC2, RegisteredProof: int64(spt),
		SectorSize: ssize, MinerID: abi.ActorID(c.Uint64("miner")), SectorNumber: sector, Phase1Out: phase1,
	}, nil
}
