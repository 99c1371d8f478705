// Command chaos drives a replicated Strata cluster with concurrent clients while nodes are
// killed and paused, records the history, and checks it for linearizability with porcupine.
//
//	chaos run   -endpoints 127.0.0.1:7001,... -out history.jsonl [-cluster-dir DIR -restart CMD]
//	chaos check [-html FILE] history.jsonl
//
// check exits 0 when the history is linearizable, 1 when it is not (and writes porcupine's
// visualization), 2 on bad input or usage, 3 when the checker ran out of time.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/anishathalye/porcupine"
)

const usage = `usage:
  chaos run   -endpoints HOST:PORT,... -out FILE [flags]   drive clients (and a nemesis), record the history
  chaos check [-html FILE] [-timeout D] FILE              check a history for linearizability
Run "chaos run -h" or "chaos check -h" for the flags.
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	switch os.Args[1] {
	case "check":
		os.Exit(checkMain(os.Args[2:], os.Stdout, os.Stderr))
	case "run":
		os.Exit(runMain(os.Args[2:], os.Stdout, os.Stderr))
	default:
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
}

// Exit codes of check.
const (
	exitLinearizable    = 0
	exitNotLinearizable = 1
	exitBadInput        = 2
	exitUnknown         = 3
)

func checkMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	html := fs.String("html", "", "where to write the visualization on failure (default: FILE.html)")
	timeout := fs.Duration("timeout", 5*time.Minute, "give up (exit 3) after this long; 0: never")
	if err := fs.Parse(args); err != nil {
		return exitBadInput
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "check: want exactly one history file")
		return exitBadInput
	}
	path := fs.Arg(0)
	recs, err := ReadHistory(path)
	if err != nil {
		fmt.Fprintf(stderr, "check: %v\n", err)
		return exitBadInput
	}
	if len(recs) == 0 {
		fmt.Fprintf(stderr, "check: %s: no operations\n", path)
		return exitBadInput
	}
	var ok, unknown, fail int
	for _, r := range recs {
		switch r.Outcome {
		case OutcomeOK:
			ok++
		case OutcomeUnknown:
			unknown++
		default:
			fail++
		}
	}
	fmt.Fprintf(stdout, "history %s: %d operations (%d ok, %d unknown, %d failed)\n", path, len(recs), ok, unknown, fail)
	t0 := time.Now()
	res, info := checkHistory(recs, *timeout)
	took := time.Since(t0).Round(time.Millisecond)
	switch res {
	case porcupine.Ok:
		fmt.Fprintf(stdout, "verdict: linearizable (checked in %s)\n", took)
		return exitLinearizable
	case porcupine.Unknown:
		fmt.Fprintf(stdout, "verdict: unknown (the checker gave up after %s; nothing found so far)\n", took)
		return exitUnknown
	}
	fmt.Fprintf(stdout, "verdict: NOT linearizable (checked in %s)\n", took)
	out := *html
	if out == "" {
		out = path + ".html"
	}
	if err := porcupine.VisualizePath(kvModel, info, out); err != nil {
		fmt.Fprintf(stderr, "check: writing the visualization: %v\n", err)
	} else {
		fmt.Fprintf(stdout, "visualization: %s (open it in a browser; the failing key's longest linearizable prefix is shown)\n", out)
	}
	return exitNotLinearizable
}

func runMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	endpoints := fs.String("endpoints", "", "comma-separated HOST:PORT of the nodes (loopback only)")
	out := fs.String("out", "history.jsonl", "where to write the history")
	clients := fs.Int("clients", 5, "concurrent clients (4-8 in a chaos run)")
	keys := fs.Int("keys", 3, "number of keys")
	duration := fs.Duration("duration", 30*time.Second, "how long to run (at most 30m)")
	timeout := fs.Duration("timeout", 2*time.Second, "per-request timeout")
	seed := fs.Int64("seed", 0, "seed of the clients and the nemesis (0: from the clock; printed)")
	local := fs.Bool("local-reads", false, "read with ?consistency=local (possibly stale: for the self-test)")
	clusterDir := fs.String("cluster-dir", "", "nemesis: the nodes of `strata cluster up --dir DIR` (DIR/cluster.json, DIR/pids); also the endpoints if -endpoints is empty")
	pids := fs.String("pids", "", "nemesis: comma-separated pids of the nodes (instead of -cluster-dir)")
	restart := fs.String("restart", "", "nemesis: sh command restarting a killed node; {id} {addr} {dir} {node} are replaced; should exec the server")
	kill := fs.Bool("kill", true, "nemesis: SIGKILL nodes and restart them (needs -restart)")
	pause := fs.Bool("pause", true, "nemesis: SIGSTOP nodes and SIGCONT them")
	if err := fs.Parse(args); err != nil {
		return exitBadInput
	}
	if *duration <= 0 || *duration > 30*time.Minute {
		fmt.Fprintln(stderr, "run: -duration must be within (0, 30m]: the run is bounded")
		return exitBadInput
	}
	if *seed == 0 {
		*seed = time.Now().UnixNano()
	}
	logf := func(format string, a ...interface{}) { fmt.Fprintf(stdout, format+"\n", a...) }
	cfg := RunConfig{
		Clients: *clients, Keys: *keys, Duration: *duration, Timeout: *timeout,
		Seed: *seed, LocalReads: *local, Out: *out, Log: logf,
	}
	for _, ep := range strings.Split(*endpoints, ",") {
		if ep = strings.TrimSpace(ep); ep != "" {
			cfg.Endpoints = append(cfg.Endpoints, ep)
		}
	}
	for _, ep := range cfg.Endpoints {
		if err := checkLoopback(ep); err != nil {
			fmt.Fprintf(stderr, "run: %v\n", err)
			return exitBadInput
		}
	}
	var nodes []*Node
	switch {
	case *clusterDir != "" && *pids != "":
		fmt.Fprintln(stderr, "run: give -cluster-dir or -pids, not both")
		return exitBadInput
	case *clusterDir != "":
		ns, eps, err := NodesFromClusterDir(*clusterDir)
		if err != nil {
			fmt.Fprintf(stderr, "run: %v\n", err)
			return exitBadInput
		}
		nodes = ns
		if len(cfg.Endpoints) == 0 {
			cfg.Endpoints = eps
		}
	case *pids != "":
		var ps []int
		for _, s := range strings.Split(*pids, ",") {
			p, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil || p <= 1 {
				fmt.Fprintf(stderr, "run: -pids: %q is not a pid\n", s)
				return exitBadInput
			}
			ps = append(ps, p)
		}
		nodes = NodesFromPids(ps)
	}
	if nodes != nil {
		if *kill && *restart == "" {
			fmt.Fprintln(stderr, "run: no -restart command: nodes will be paused, not killed")
		}
		cfg.Nemesis = &Nemesis{Nodes: nodes, RestartCmd: *restart, Seed: *seed, Kill: *kill, Pause: *pause, Log: logf}
	}
	logf("seed %d, %d clients, %d keys, %s, endpoints %s", *seed, cfg.Clients, cfg.Keys, cfg.Duration, strings.Join(cfg.Endpoints, ","))

	// Ctrl-C or SIGTERM ends the run early but orderly: the history is written and the
	// nemesis resumes and stops what it paused and started.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	stats, err := Run(ctx, cfg)
	if err != nil {
		fmt.Fprintf(stderr, "run: %v\n", err)
		return exitBadInput
	}
	// One line for scripts to pick up.
	fmt.Fprintf(stdout, "summary: kills=%d restarts=%d pauses=%d operations=%d ok=%d unknown=%d failed=%d final_reads=%d/%d history=%s\n",
		stats.Kills, stats.Restarts, stats.Pauses, stats.Ops, stats.OK, stats.Unknown, stats.Fail, stats.FinalReads, cfg.Keys, cfg.Out)
	if stats.FinalReads < cfg.Keys {
		// The cluster did not recover: that is a finding too.
		fmt.Fprintf(stderr, "run: only %d of %d keys could be read after the faults ended\n", stats.FinalReads, cfg.Keys)
		return 1
	}
	return 0
}
