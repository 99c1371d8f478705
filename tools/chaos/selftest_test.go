// The self-test: the driver against a tiny in-process fake of the replicated service, whose
// followers lag the leader. With linearizable reads the checker must pass the history; with
// ?consistency=local reads (stale, as on a partitioned follower) it must fail it. Also the
// loopback guard and the nemesis's promise to leave nothing paused or running.
package main

import (
	"context"
	"encoding/json"
	"io"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// fakeCluster is one linearizable register map (the "leader") served by several nodes, each
// with its own copy that catches up only every lag (a follower cut off most of the time).
// Default reads and all writes go to the leader's map under one lock: linearizable.
// ?consistency=local reads a node's own copy: stale.
type fakeCluster struct {
	mu     sync.Mutex
	leader map[string]string
	copies []map[string]string
	rng    *rand.Rand
}

func newFakeCluster(nodes int, lag time.Duration) (*fakeCluster, []string, func()) {
	fc := &fakeCluster{leader: map[string]string{}, rng: rand.New(rand.NewSource(1))}
	var servers []*httptest.Server
	var endpoints []string
	for i := 0; i < nodes; i++ {
		fc.copies = append(fc.copies, map[string]string{})
		srv := httptest.NewServer(fc.handler(i)) // httptest listens on 127.0.0.1
		servers = append(servers, srv)
		endpoints = append(endpoints, srv.URL)
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(lag)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				fc.mu.Lock()
				// One follower at a time catches up, so some copy is always behind.
				i := fc.rng.Intn(len(fc.copies))
				fc.copies[i] = map[string]string{}
				for k, v := range fc.leader {
					fc.copies[i][k] = v
				}
				fc.mu.Unlock()
			}
		}
	}()
	return fc, endpoints, func() {
		close(stop)
		<-done
		for _, s := range servers {
			s.Close()
		}
	}
}

// fate decides, for a write, whether the client gets its answer: mostly yes; rarely the
// write applies but the answer never comes in time, or it never applies and never answers,
// so that the history holds unknown outcomes of both kinds.
func (fc *fakeCluster) fate() (apply, answer bool) {
	fc.mu.Lock()
	p := fc.rng.Intn(100)
	fc.mu.Unlock()
	switch {
	case p == 0:
		return true, false
	case p == 1:
		return false, false
	}
	return true, true
}

const fakeHang = 300 * time.Millisecond // longer than the test's request timeout

func (fc *fakeCluster) handler(node int) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/kv/{key}", func(w http.ResponseWriter, r *http.Request) {
		key := r.PathValue("key")
		time.Sleep(time.Duration(200+rand.Intn(800)) * time.Microsecond)
		switch r.Method {
		case http.MethodGet:
			fc.mu.Lock()
			m := fc.leader
			if r.URL.Query().Get("consistency") == "local" {
				m = fc.copies[node]
			}
			v, ok := m[key]
			fc.mu.Unlock()
			if !ok {
				http.NotFound(w, r)
				return
			}
			_, _ = io.WriteString(w, v)
		case http.MethodPut, http.MethodDelete:
			body, _ := io.ReadAll(r.Body)
			apply, answer := fc.fate()
			if apply {
				fc.mu.Lock()
				if r.Method == http.MethodPut {
					fc.leader[key] = string(body)
				} else {
					delete(fc.leader, key)
				}
				fc.mu.Unlock()
			}
			if !answer {
				time.Sleep(fakeHang)
			}
		default:
			w.WriteHeader(http.StatusMethodNotAllowed)
		}
	})
	mux.HandleFunc("POST /txn", func(w http.ResponseWriter, r *http.Request) {
		var req txnRequest
		dec := json.NewDecoder(r.Body)
		dec.DisallowUnknownFields() // as the server's parser does
		if err := dec.Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		time.Sleep(time.Duration(200+rand.Intn(800)) * time.Microsecond)
		apply, answer := fc.fate()
		ok := false
		if apply {
			fc.mu.Lock()
			ok = true
			for _, c := range req.Compare {
				v, found := fc.leader[c.Key]
				if c.Value == nil && found || c.Value != nil && (!found || v != *c.Value) {
					ok = false
				}
			}
			if ok {
				for _, op := range req.Ops {
					switch op.Op {
					case "put":
						fc.leader[op.Key] = *op.Value
					case "delete":
						delete(fc.leader, op.Key)
					}
				}
			}
			fc.mu.Unlock()
		}
		if !answer {
			time.Sleep(fakeHang)
		}
		_ = json.NewEncoder(w).Encode(map[string]interface{}{"index": 1, "succeeded": ok, "duplicate": false})
	})
	return mux
}

// runAgainstFake drives the fake for a moment and returns the history and its verdict.
func runAgainstFake(t *testing.T, local bool) (RunStats, porcupine.CheckResult) {
	_, endpoints, stop := newFakeCluster(3, 50*time.Millisecond)
	defer stop()
	out := filepath.Join(t.TempDir(), "history.jsonl")
	stats, err := Run(context.Background(), RunConfig{
		Endpoints: endpoints, Clients: 5, Keys: 3, Duration: 1500 * time.Millisecond,
		Timeout: 100 * time.Millisecond, Seed: 42, LocalReads: local, Out: out,
	})
	if err != nil {
		t.Fatal(err)
	}
	recs, err := ReadHistory(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != stats.Ops || stats.OK < 200 || stats.Unknown == 0 || stats.FinalReads != 3 {
		t.Fatalf("history of %d records, stats %+v: want hundreds of answered operations and some unknown", len(recs), stats)
	}
	res, _ := checkHistory(recs, 60*time.Second)
	t.Logf("local reads %v: %+v, verdict %s", local, stats, res)
	return stats, res
}

func TestSelfTestLinearizableReadsPass(t *testing.T) {
	if _, res := runAgainstFake(t, false); res != porcupine.Ok {
		t.Fatalf("verdict %s against a linearizable fake, want Ok", res)
	}
}

func TestSelfTestLocalReadsFail(t *testing.T) {
	if _, res := runAgainstFake(t, true); res != porcupine.Illegal {
		t.Fatalf("verdict %s with stale local reads, want Illegal", res)
	}
}

func TestLoopbackOnly(t *testing.T) {
	for _, tc := range []struct {
		ep string
		ok bool
	}{
		{"127.0.0.1:8001", true},
		{"http://127.0.0.2:8001", true},
		{"[::1]:8001", true},
		{"http://[::1]:8001/", true},
		{"localhost:8001", false}, // a name could resolve anywhere
		{"10.0.0.5:8001", false},
		{"http://192.168.1.1:80", false},
		{"[::2]:8001", false},
		{"127.0.0.1", false}, // no port
	} {
		err := checkLoopback(tc.ep)
		if (err == nil) != tc.ok {
			t.Errorf("%s: error %v, want ok=%v", tc.ep, err, tc.ok)
		}
		if err != nil && !strings.Contains(err.Error(), tc.ep) {
			t.Errorf("%s: error %q does not name the address", tc.ep, err)
		}
	}
	_, err := Run(context.Background(), RunConfig{Endpoints: []string{"127.0.0.1:1", "10.1.2.3:80"}, Clients: 1, Keys: 1, Duration: time.Second, Timeout: time.Second, Out: filepath.Join(t.TempDir(), "h")})
	if err == nil || !strings.Contains(err.Error(), "10.1.2.3") {
		t.Fatalf("run accepted a non-loopback endpoint: %v", err)
	}
}

// procState is the state letter of /proc/PID/stat ("T" stopped, "" gone or a zombie).
func procState(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return ""
	}
	if st := s[i+2 : i+3]; st != "Z" {
		return st
	}
	return ""
}

// TestNemesisLeavesNothingBehind faults stand-in nodes (sleep processes, pid files in a
// cluster dir) and checks that it killed, restarted and paused them, and that at the end no
// process is left stopped and none it started is left running.
func TestNemesisLeavesNothingBehind(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc")
	}
	dir := t.TempDir()
	var originals []*exec.Cmd
	var pids []string
	sleepPath, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("needs sleep")
	}
	for i := 1; i <= 3; i++ {
		// Named "server" in its arguments, as the nemesis wants of a node it signals.
		cmd := &exec.Cmd{Path: sleepPath, Args: []string{"server", "60"}}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		originals = append(originals, cmd)
		pids = append(pids, strconv.Itoa(cmd.Process.Pid))
		if err := os.MkdirAll(filepath.Join(dir, "n"+strconv.Itoa(i)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cluster := `{"cluster":"strata","nodes":{"1":"127.0.0.1:7001","2":"127.0.0.1:7002","3":"127.0.0.1:7003"}}`
	if err := os.WriteFile(filepath.Join(dir, "cluster.json"), []byte(cluster), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pids"), []byte(strings.Join(pids, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, c := range originals {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
	}()
	if err := os.WriteFile(filepath.Join(dir, "pids"), []byte(strings.Repeat(strconv.Itoa(os.Getpid())+"\n", 3)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := NodesFromClusterDir(dir); err == nil || !strings.Contains(err.Error(), "not a running server") {
		t.Fatalf("pids of processes that are not servers accepted: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pids"), []byte(strings.Join(pids, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	nodes, endpoints, err := NodesFromClusterDir(dir)
	if err != nil || len(nodes) != 3 || strings.Join(endpoints, ",") != "127.0.0.1:7001,127.0.0.1:7002,127.0.0.1:7003" {
		t.Fatalf("nodes %v, endpoints %v, %v", nodes, endpoints, err)
	}
	for i, nd := range nodes {
		if nd.Pid != originals[i].Process.Pid || nd.ID != strconv.Itoa(i+1) || nd.Dir != filepath.Join(dir, "n"+nd.ID) {
			t.Fatalf("node %d: %+v", i, nd)
		}
	}
	// The command checks its substitutions, so a wrong one fails the restart.
	n := &Nemesis{Nodes: nodes, Interval: 20 * time.Millisecond, Seed: 3, Kill: true, Pause: true,
		RestartCmd: `test -d {dir} && test "{addr}" = "127.0.0.1:700{id}" && exec sleep 60`}
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	n.Run(ctx, time.Now())
	n.StopStarted(time.Now())
	kills, restarts, pauses := n.Counts()
	if kills == 0 || pauses == 0 || restarts != kills {
		t.Fatalf("kills %d, restarts %d, pauses %d: want some of each, a restart per kill", kills, restarts, pauses)
	}
	for _, c := range originals {
		if st := procState(c.Process.Pid); st == "T" {
			t.Errorf("pid %d left stopped", c.Process.Pid)
		}
	}
	for _, nd := range n.started {
		if st := procState(nd.Pid); st != "" {
			t.Errorf("%s: pid %d, started by the nemesis, still there (state %s)", nd.Name, nd.Pid, st)
		}
	}
}
