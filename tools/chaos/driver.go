// The chaos driver: clients doing puts, linearizable gets, deletes and compare-and-sets on a
// few keys against the given endpoints, each operation recorded with its invoke and return
// times, while an optional nemesis kills and pauses nodes.
package main

import (
	"context"
	"fmt"
	"math/rand"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// RunConfig is everything one run needs.
type RunConfig struct {
	Endpoints  []string
	Clients    int
	Keys       int
	Duration   time.Duration
	Timeout    time.Duration // per request
	Seed       int64
	LocalReads bool // ?consistency=local: stale reads allowed, for the self-test
	Out        string
	Nemesis    *Nemesis // nil: no faults
	Log        func(format string, args ...interface{})
}

// RunStats counts what a run did.
type RunStats struct {
	Ops, OK, Unknown, Fail int
	Kills, Restarts        int
	Pauses                 int
	FinalReads             int // keys read after the faults ended (all of them, when healthy)
}

// finalReadAttempts bounds the final read of a key: a cluster electing a leader after the
// last fault gets a few seconds.
const finalReadAttempts = 15

// checkLoopback refuses any endpoint whose host is not a loopback address literal: the chaos
// run kills processes and floods them with writes, and must never aim at a real machine.
func checkLoopback(endpoint string) error {
	hostport := endpoint
	if i := strings.Index(hostport, "://"); i >= 0 {
		hostport = hostport[i+3:]
	}
	if i := strings.IndexByte(hostport, '/'); i >= 0 {
		hostport = hostport[:i]
	}
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		return fmt.Errorf("endpoint %q: want host:port (%v)", endpoint, err)
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("endpoint %q: %q is not a loopback address (127.0.0.0/8 or ::1); refusing", endpoint, host)
	}
	return nil
}

// outcomeOf classifies an operation's error: none, certainly not applied, or unknown.
func outcomeOf(err error) string {
	if err == nil {
		return OutcomeOK
	}
	if ae, ok := err.(*apiError); ok && ae.Definite {
		return OutcomeFail
	}
	return OutcomeUnknown
}

// Run drives the clients (and the nemesis) until cfg.Duration has passed or ctx is
// cancelled, and writes the history to cfg.Out. Operations in flight at the end finish or
// time out (at most cfg.Timeout later) and are recorded too.
func Run(ctx context.Context, cfg RunConfig) (RunStats, error) {
	var stats RunStats
	if len(cfg.Endpoints) == 0 {
		return stats, fmt.Errorf("no endpoints")
	}
	for _, ep := range cfg.Endpoints {
		if err := checkLoopback(ep); err != nil {
			return stats, err
		}
	}
	if cfg.Clients < 1 || cfg.Keys < 1 {
		return stats, fmt.Errorf("need at least one client and one key")
	}
	if cfg.Log == nil {
		cfg.Log = func(string, ...interface{}) {}
	}
	hw, err := CreateHistory(cfg.Out)
	if err != nil {
		return stats, err
	}

	ctx, cancel := context.WithTimeout(ctx, cfg.Duration)
	defer cancel()
	start := time.Now()
	// Monotonic nanoseconds since the start: wall-clock jumps cannot reorder operations.
	now := func() int64 { return time.Since(start).Nanoseconds() }

	records := make(chan Record, 1024)
	var writeErr error
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		for r := range records {
			stats.Ops++
			switch r.Outcome {
			case OutcomeOK:
				stats.OK++
			case OutcomeUnknown:
				stats.Unknown++
			case OutcomeFail:
				stats.Fail++
			}
			if err := hw.Write(r); err != nil && writeErr == nil {
				writeErr = err
			}
		}
	}()

	var nemDone chan struct{}
	if cfg.Nemesis != nil {
		nemDone = make(chan struct{})
		go func() {
			defer close(nemDone)
			cfg.Nemesis.Run(ctx, start)
		}()
	}

	client := &http.Client{Transport: &http.Transport{
		MaxIdleConnsPerHost: cfg.Clients,
		DialContext:         (&net.Dialer{Timeout: cfg.Timeout}).DialContext,
	}}
	keys := make([]string, cfg.Keys)
	for i := range keys {
		keys[i] = fmt.Sprintf("k%d", i)
	}
	// Client ids beyond the first cfg.Clients are handed out to workers whose operation had
	// no answer: that operation stays open forever (it may still apply), so the worker
	// continues as a new client, as Jepsen does with a crashed process.
	var nextID atomic.Int64
	nextID.Store(int64(cfg.Clients))

	var wg sync.WaitGroup
	for w := 0; w < cfg.Clients; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(cfg.Seed*7919 + int64(w)))
			id := w
			seq := 0
			// The last value this worker saw per key: a cas expecting it has a fair chance.
			seen := map[string]*string{}
			for ctx.Err() == nil {
				seq++
				key := keys[rng.Intn(len(keys))]
				ep := cfg.Endpoints[rng.Intn(len(cfg.Endpoints))]
				value := fmt.Sprintf("%d.%d", id, seq) // unique: every read names its write
				rec := Record{Client: id, Key: key}
				rctx, rcancel := context.WithTimeout(context.Background(), cfg.Timeout)
				rec.InvokeNs = now()
				var err error
				switch p := rng.Intn(100); {
				case p < 35:
					rec.Op = OpPut
					rec.Value = &value
					if err = apiPut(rctx, client, ep, key, value); err == nil {
						seen[key] = &value
					}
				case p < 70:
					rec.Op = OpGet
					var found bool
					var read string
					if found, read, err = apiGet(rctx, client, ep, key, cfg.LocalReads); err == nil {
						rec.Found = &found
						if found {
							rec.Read = &read
							seen[key] = &read
						} else {
							seen[key] = nil
						}
					}
				case p < 95:
					rec.Op = OpCas
					rec.Value = &value
					rec.Expect = seen[key]
					var ok bool
					if ok, err = apiCas(rctx, client, ep, key, rec.Expect, value); err == nil {
						rec.Succeeded = &ok
						if ok {
							seen[key] = &value
						}
					}
				default:
					rec.Op = OpDelete
					if err = apiDelete(rctx, client, ep, key); err == nil {
						seen[key] = nil
					}
				}
				rec.ReturnNs = now()
				rcancel()
				rec.Outcome = outcomeOf(err)
				if err != nil {
					rec.Error = err.Error()
				}
				records <- rec
				if rec.Outcome == OutcomeUnknown && rec.Op != OpGet {
					id = int(nextID.Add(1) - 1)
				}
				if rec.Outcome != OutcomeOK {
					// Do not spin on a node that is down or a cluster without a leader: every
					// unknown write stays open to the end of the history and widens the
					// checker's search.
					time.Sleep(time.Duration(50+rng.Intn(150)) * time.Millisecond)
				}
			}
		}(w)
	}
	wg.Wait()
	if nemDone != nil {
		<-nemDone
		stats.Kills, stats.Restarts, stats.Pauses = cfg.Nemesis.Counts()
	}
	// Final reads of every key once the nemesis has healed the cluster: whatever was
	// acknowledged must still be there, and a history that ends in faults would not show a
	// write lost in the last one.
	finalID := int(nextID.Load())
	for i, key := range keys {
		for attempt := 0; attempt < finalReadAttempts; attempt++ {
			ep := cfg.Endpoints[(i+attempt)%len(cfg.Endpoints)]
			rctx, rcancel := context.WithTimeout(context.Background(), cfg.Timeout)
			rec := Record{Client: finalID, Op: OpGet, Key: key, InvokeNs: now()}
			found, read, err := apiGet(rctx, client, ep, key, cfg.LocalReads)
			rec.ReturnNs = now()
			rcancel()
			if err != nil {
				rec.Outcome, rec.Error = outcomeOf(err), err.Error()
				records <- rec
				time.Sleep(200 * time.Millisecond)
				continue
			}
			rec.Outcome, rec.Found = OutcomeOK, &found
			if found {
				rec.Read = &read
			}
			records <- rec
			stats.FinalReads++
			break
		}
	}
	if cfg.Nemesis != nil {
		cfg.Nemesis.StopStarted(start)
	}
	close(records)
	<-writerDone
	if err := hw.Close(); err != nil && writeErr == nil {
		writeErr = err
	}
	cfg.Log("ran %s: %d operations (%d ok, %d unknown, %d failed)", time.Since(start).Round(time.Millisecond), stats.Ops, stats.OK, stats.Unknown, stats.Fail)
	return stats, writeErr
}
