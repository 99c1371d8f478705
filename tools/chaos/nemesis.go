// The nemesis: kills nodes with SIGKILL and restarts them, pauses them with SIGSTOP and
// resumes them with SIGCONT, one fault at a time at seeded random moments. Whatever it paused
// is resumed and whatever it started is stopped when it ends.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Node is one server process the nemesis may fault.
type Node struct {
	Name string // "n<id>" with a cluster dir, else the original pid
	ID   string // the node id ("" without a cluster dir)
	Addr string // its host:port ("" without a cluster dir)
	Dir  string // its directory ("" without a cluster dir)
	Pid  int
	cmd  *exec.Cmd // set once the nemesis restarted it
	done chan struct{}
}

// Nemesis faults nodes.
type Nemesis struct {
	Nodes      []*Node
	Interval   time.Duration // faults last, and come apart, 1-3 intervals; 0 means 1 s
	RestartCmd string        // sh -c template: {id} {addr} {dir} {node} replaced; should exec the server
	Seed       int64
	Kill       bool // SIGKILL and restart (needs RestartCmd)
	Pause      bool // SIGSTOP and SIGCONT
	Log        func(format string, args ...interface{})

	mu                      sync.Mutex
	kills, restarts, pauses int
	paused                  map[int]bool
	started                 []*Node
}

// clusterFile is DIR/cluster.json as `strata cluster up` writes it.
type clusterFile struct {
	Cluster string            `json:"cluster"`
	Nodes   map[string]string `json:"nodes"` // node id -> host:port
}

// NodesFromClusterDir reads the layout `strata cluster up --dir DIR` leaves: DIR/cluster.json
// ({"cluster": name, "nodes": {id: "host:port"}}), DIR/pids (the servers' pids, one a line,
// in increasing node id order) and the node directories DIR/n<id>. Returns the nodes and
// their endpoints in node id order.
func NodesFromClusterDir(dir string) ([]*Node, []string, error) {
	cpath := filepath.Join(dir, "cluster.json")
	b, err := os.ReadFile(cpath)
	if err != nil {
		return nil, nil, err
	}
	var cf clusterFile
	if err := json.Unmarshal(b, &cf); err != nil || len(cf.Nodes) == 0 {
		return nil, nil, fmt.Errorf("%s: want {\"cluster\": name, \"nodes\": {id: addr}} (%v)", cpath, err)
	}
	ids := make([]int, 0, len(cf.Nodes))
	for id := range cf.Nodes {
		n, err := strconv.Atoi(id)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: node id %q is not a number", cpath, id)
		}
		ids = append(ids, n)
	}
	sort.Ints(ids)
	ppath := filepath.Join(dir, "pids")
	b, err = os.ReadFile(ppath)
	if err != nil {
		return nil, nil, err
	}
	fields := strings.Fields(string(b))
	if len(fields) != len(ids) {
		return nil, nil, fmt.Errorf("%s: %d pids for the %d nodes of %s", ppath, len(fields), len(ids), cpath)
	}
	var nodes []*Node
	var endpoints []string
	for i, id := range ids {
		pid, err := strconv.Atoi(fields[i])
		if err != nil || pid <= 1 {
			return nil, nil, fmt.Errorf("%s: not a pid: %q", ppath, fields[i])
		}
		sid := strconv.Itoa(id)
		// A stale pid file may name a pid reused by an unrelated process: never signal one
		// that is not a server.
		if !isServer(pid) {
			return nil, nil, fmt.Errorf("%s: pid %d of node %s is not a running server (is the cluster up?)", ppath, pid, sid)
		}
		addr := cf.Nodes[sid]
		nodes = append(nodes, &Node{Name: "n" + sid, ID: sid, Addr: addr, Dir: filepath.Join(dir, "n"+sid), Pid: pid})
		endpoints = append(endpoints, addr)
	}
	return nodes, endpoints, nil
}

// isServer tells whether pid is alive and has "server" among its arguments, as the nodes
// `strata cluster up` starts do (the same test `strata cluster down` makes).
func isServer(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return false
	}
	for _, arg := range strings.Split(string(b), "\x00") {
		if arg == "server" {
			return true
		}
	}
	return false
}

// NodesFromPids makes nodes of a list of pids.
func NodesFromPids(pids []int) []*Node {
	var nodes []*Node
	for _, p := range pids {
		nodes = append(nodes, &Node{Name: strconv.Itoa(p), Pid: p})
	}
	return nodes
}

// Counts returns the faults injected so far.
func (n *Nemesis) Counts() (kills, restarts, pauses int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.kills, n.restarts, n.pauses
}

func (n *Nemesis) logf(start time.Time, format string, args ...interface{}) {
	if n.Log != nil {
		n.Log("nemesis %7.3fs: %s", time.Since(start).Seconds(), fmt.Sprintf(format, args...))
	}
}

// sleep waits d or until ctx is done; false when ctx is done.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// Run injects faults until ctx is done, then heals: a node killed in the last fault is
// restarted and anything paused is resumed, so the cluster is whole when it returns (for the
// driver's final reads). StopStarted then stops the processes it started.
func (n *Nemesis) Run(ctx context.Context, start time.Time) {
	rng := rand.New(rand.NewSource(n.Seed))
	n.mu.Lock()
	n.paused = map[int]bool{}
	n.mu.Unlock()
	defer n.resumeAll(start)
	var faults []string
	if n.Kill && n.RestartCmd != "" {
		faults = append(faults, "kill")
	}
	if n.Pause {
		faults = append(faults, "pause")
	}
	if len(faults) == 0 || len(n.Nodes) == 0 {
		<-ctx.Done()
		return
	}
	iv := n.Interval
	if iv <= 0 {
		iv = time.Second
	}
	between := func() time.Duration { return iv + time.Duration(rng.Int63n(int64(2*iv))) }
	for sleep(ctx, between()) {
		node := n.Nodes[rng.Intn(len(n.Nodes))]
		hold := between()
		switch faults[rng.Intn(len(faults))] {
		case "kill":
			if err := syscall.Kill(node.Pid, syscall.SIGKILL); err != nil {
				n.logf(start, "SIGKILL %s (pid %d): %v", node.Name, node.Pid, err)
				continue
			}
			n.mu.Lock()
			n.kills++
			n.mu.Unlock()
			n.logf(start, "SIGKILL %s (pid %d), down for %s", node.Name, node.Pid, hold)
			// The restart happens even when the run ends meanwhile: a node is never left
			// down by the nemesis.
			sleep(ctx, hold)
			if err := n.restart(node); err != nil {
				n.logf(start, "restart %s: %v", node.Name, err)
				continue
			}
			n.logf(start, "restarted %s (pid %d)", node.Name, node.Pid)
		case "pause":
			if err := syscall.Kill(node.Pid, syscall.SIGSTOP); err != nil {
				n.logf(start, "SIGSTOP %s (pid %d): %v", node.Name, node.Pid, err)
				continue
			}
			n.mu.Lock()
			n.pauses++
			n.paused[node.Pid] = true
			n.mu.Unlock()
			n.logf(start, "SIGSTOP %s (pid %d) for %s", node.Name, node.Pid, hold)
			sleep(ctx, hold)
			n.resume(node.Pid)
			n.logf(start, "SIGCONT %s (pid %d)", node.Name, node.Pid)
		}
	}
}

func (n *Nemesis) resume(pid int) {
	_ = syscall.Kill(pid, syscall.SIGCONT)
	n.mu.Lock()
	delete(n.paused, pid)
	n.mu.Unlock()
}

// restart runs the restart command for a node, in its own process group so that stopping it
// reaches the server even behind a shell.
func (n *Nemesis) restart(node *Node) error {
	c := strings.NewReplacer("{node}", node.Name, "{id}", node.ID, "{addr}", node.Addr, "{dir}", node.Dir).Replace(n.RestartCmd)
	cmd := exec.Command("sh", "-c", c)
	cmd.Stdout = os.Stderr
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	node.cmd = cmd
	node.Pid = cmd.Process.Pid
	node.done = make(chan struct{})
	go func(done chan struct{}) { _ = cmd.Wait(); close(done) }(node.done)
	n.mu.Lock()
	n.restarts++
	n.started = append(n.started, node)
	n.mu.Unlock()
	return nil
}

// resumeAll resumes every process still paused.
func (n *Nemesis) resumeAll(start time.Time) {
	n.mu.Lock()
	var paused []int
	for pid := range n.paused {
		paused = append(paused, pid)
	}
	n.mu.Unlock()
	for _, pid := range paused {
		n.resume(pid)
		n.logf(start, "SIGCONT pid %d (cleanup)", pid)
	}
}

// StopStarted stops (SIGTERM, SIGKILL after 5 s) every process the nemesis started and that
// still runs: `strata cluster down` knows only the pids it started itself.
func (n *Nemesis) StopStarted(start time.Time) {
	n.mu.Lock()
	started := append([]*Node(nil), n.started...)
	n.mu.Unlock()
	for _, node := range started {
		// A node restarted twice was started twice; only its latest process is alive.
		if node.cmd == nil || node.cmd.Process.Pid != node.Pid {
			continue
		}
		select {
		case <-node.done:
			continue
		default:
		}
		_ = syscall.Kill(-node.Pid, syscall.SIGTERM)
		select {
		case <-node.done:
		case <-time.After(5 * time.Second):
			_ = syscall.Kill(-node.Pid, syscall.SIGKILL)
			<-node.done
		}
		n.logf(start, "stopped %s (pid %d), which the nemesis started", node.Name, node.Pid)
		node.cmd = nil
	}
}
