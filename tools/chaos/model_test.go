// Tests of the key-value model and the history format: a table of small hand-written
// histories with the verdict each must get, malformed lines with the error each must give, and
// the exit codes of check.
package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// Each history is JSON lines as the driver writes them; times are small numbers of ns.
var modelCases = []struct {
	name    string
	history string
	want    porcupine.CheckResult
}{
	{"empty key reads absent", `
{"client":0,"op":"get","key":"a","invoke_ns":0,"return_ns":1,"outcome":"ok","found":false}`, porcupine.Ok},
	{"read of a value never written", `
{"client":0,"op":"get","key":"a","invoke_ns":0,"return_ns":1,"outcome":"ok","found":true,"read":"x"}`, porcupine.Illegal},
	{"put then get", `
{"client":0,"op":"put","key":"a","value":"1","invoke_ns":0,"return_ns":10,"outcome":"ok"}
{"client":1,"op":"get","key":"a","invoke_ns":20,"return_ns":30,"outcome":"ok","found":true,"read":"1"}`, porcupine.Ok},
	{"stale read after a newer write returned", `
{"client":0,"op":"put","key":"a","value":"1","invoke_ns":0,"return_ns":10,"outcome":"ok"}
{"client":0,"op":"put","key":"a","value":"2","invoke_ns":20,"return_ns":30,"outcome":"ok"}
{"client":1,"op":"get","key":"a","invoke_ns":40,"return_ns":50,"outcome":"ok","found":true,"read":"1"}`, porcupine.Illegal},
	{"read concurrent with a write sees the old value", `
{"client":0,"op":"put","key":"a","value":"1","invoke_ns":0,"return_ns":10,"outcome":"ok"}
{"client":0,"op":"put","key":"a","value":"2","invoke_ns":20,"return_ns":50,"outcome":"ok"}
{"client":1,"op":"get","key":"a","invoke_ns":30,"return_ns":40,"outcome":"ok","found":true,"read":"1"}`, porcupine.Ok},
	{"read concurrent with a write sees the new value", `
{"client":0,"op":"put","key":"a","value":"1","invoke_ns":0,"return_ns":10,"outcome":"ok"}
{"client":0,"op":"put","key":"a","value":"2","invoke_ns":20,"return_ns":50,"outcome":"ok"}
{"client":1,"op":"get","key":"a","invoke_ns":30,"return_ns":40,"outcome":"ok","found":true,"read":"2"}`, porcupine.Ok},
	{"two reads disagree on the order of two writes", `
{"client":0,"op":"put","key":"a","value":"1","invoke_ns":0,"return_ns":100,"outcome":"ok"}
{"client":1,"op":"put","key":"a","value":"2","invoke_ns":0,"return_ns":100,"outcome":"ok"}
{"client":2,"op":"get","key":"a","invoke_ns":10,"return_ns":20,"outcome":"ok","found":true,"read":"1"}
{"client":2,"op":"get","key":"a","invoke_ns":30,"return_ns":40,"outcome":"ok","found":true,"read":"2"}
{"client":3,"op":"get","key":"a","invoke_ns":50,"return_ns":60,"outcome":"ok","found":true,"read":"1"}
{"client":3,"op":"get","key":"a","invoke_ns":70,"return_ns":80,"outcome":"ok","found":true,"read":"2"}`, porcupine.Illegal},
	{"timed-out write seen applied later", `
{"client":0,"op":"put","key":"a","value":"1","invoke_ns":0,"return_ns":10,"outcome":"unknown","error":"timeout"}
{"client":1,"op":"get","key":"a","invoke_ns":500,"return_ns":510,"outcome":"ok","found":true,"read":"1"}`, porcupine.Ok},
	{"timed-out write never applied", `
{"client":0,"op":"put","key":"a","value":"1","invoke_ns":0,"return_ns":10,"outcome":"unknown","error":"timeout"}
{"client":1,"op":"get","key":"a","invoke_ns":500,"return_ns":510,"outcome":"ok","found":false}`, porcupine.Ok},
	{"timed-out write seen, then unseen", `
{"client":0,"op":"put","key":"a","value":"1","invoke_ns":0,"return_ns":10,"outcome":"unknown","error":"timeout"}
{"client":1,"op":"get","key":"a","invoke_ns":500,"return_ns":510,"outcome":"ok","found":true,"read":"1"}
{"client":1,"op":"get","key":"a","invoke_ns":600,"return_ns":610,"outcome":"ok","found":false}`, porcupine.Illegal},
	{"failed write is never applied", `
{"client":0,"op":"put","key":"a","value":"1","invoke_ns":0,"return_ns":10,"outcome":"fail","error":"connection refused"}
{"client":1,"op":"get","key":"a","invoke_ns":500,"return_ns":510,"outcome":"ok","found":true,"read":"1"}`, porcupine.Illegal},
	{"timed-out read says nothing", `
{"client":0,"op":"put","key":"a","value":"1","invoke_ns":0,"return_ns":10,"outcome":"ok"}
{"client":1,"op":"get","key":"a","invoke_ns":500,"return_ns":510,"outcome":"unknown","error":"timeout"}`, porcupine.Ok},
	{"delete then read absent", `
{"client":0,"op":"put","key":"a","value":"1","invoke_ns":0,"return_ns":10,"outcome":"ok"}
{"client":0,"op":"delete","key":"a","invoke_ns":20,"return_ns":30,"outcome":"ok"}
{"client":1,"op":"get","key":"a","invoke_ns":40,"return_ns":50,"outcome":"ok","found":false}`, porcupine.Ok},
	{"deleted value read back", `
{"client":0,"op":"put","key":"a","value":"1","invoke_ns":0,"return_ns":10,"outcome":"ok"}
{"client":0,"op":"delete","key":"a","invoke_ns":20,"return_ns":30,"outcome":"ok"}
{"client":1,"op":"get","key":"a","invoke_ns":40,"return_ns":50,"outcome":"ok","found":true,"read":"1"}`, porcupine.Illegal},
	{"cas on the current value succeeds", `
{"client":0,"op":"put","key":"a","value":"1","invoke_ns":0,"return_ns":10,"outcome":"ok"}
{"client":1,"op":"cas","key":"a","expect":"1","value":"2","invoke_ns":20,"return_ns":30,"outcome":"ok","succeeded":true}
{"client":1,"op":"get","key":"a","invoke_ns":40,"return_ns":50,"outcome":"ok","found":true,"read":"2"}`, porcupine.Ok},
	{"cas on an absent key succeeds", `
{"client":1,"op":"cas","key":"a","value":"2","invoke_ns":20,"return_ns":30,"outcome":"ok","succeeded":true}
{"client":1,"op":"get","key":"a","invoke_ns":40,"return_ns":50,"outcome":"ok","found":true,"read":"2"}`, porcupine.Ok},
	{"cas succeeds on a stale value", `
{"client":0,"op":"put","key":"a","value":"1","invoke_ns":0,"return_ns":10,"outcome":"ok"}
{"client":0,"op":"put","key":"a","value":"3","invoke_ns":11,"return_ns":15,"outcome":"ok"}
{"client":1,"op":"cas","key":"a","expect":"1","value":"2","invoke_ns":20,"return_ns":30,"outcome":"ok","succeeded":true}`, porcupine.Illegal},
	{"cas fails on the current value", `
{"client":0,"op":"put","key":"a","value":"1","invoke_ns":0,"return_ns":10,"outcome":"ok"}
{"client":1,"op":"cas","key":"a","expect":"1","value":"2","invoke_ns":20,"return_ns":30,"outcome":"ok","succeeded":false}`, porcupine.Illegal},
	{"cas with unknown outcome applied", `
{"client":0,"op":"put","key":"a","value":"1","invoke_ns":0,"return_ns":10,"outcome":"ok"}
{"client":1,"op":"cas","key":"a","expect":"1","value":"2","invoke_ns":20,"return_ns":30,"outcome":"unknown"}
{"client":2,"op":"get","key":"a","invoke_ns":40,"return_ns":50,"outcome":"ok","found":true,"read":"2"}`, porcupine.Ok},
	{"cas with unknown outcome not applied", `
{"client":0,"op":"put","key":"a","value":"1","invoke_ns":0,"return_ns":10,"outcome":"ok"}
{"client":1,"op":"cas","key":"a","expect":"1","value":"2","invoke_ns":20,"return_ns":30,"outcome":"unknown"}
{"client":2,"op":"get","key":"a","invoke_ns":40,"return_ns":50,"outcome":"ok","found":true,"read":"1"}`, porcupine.Ok},
	{"cas with unknown outcome cannot apply when its comparison fails", `
{"client":0,"op":"put","key":"a","value":"1","invoke_ns":0,"return_ns":10,"outcome":"ok"}
{"client":1,"op":"cas","key":"a","expect":"9","value":"2","invoke_ns":20,"return_ns":30,"outcome":"unknown"}
{"client":2,"op":"get","key":"a","invoke_ns":40,"return_ns":50,"outcome":"ok","found":true,"read":"2"}`, porcupine.Illegal},
	{"keys are independent, but one bad key fails the history", `
{"client":0,"op":"put","key":"a","value":"1","invoke_ns":0,"return_ns":10,"outcome":"ok"}
{"client":1,"op":"put","key":"b","value":"1","invoke_ns":0,"return_ns":10,"outcome":"ok"}
{"client":1,"op":"put","key":"b","value":"2","invoke_ns":20,"return_ns":30,"outcome":"ok"}
{"client":0,"op":"get","key":"a","invoke_ns":40,"return_ns":50,"outcome":"ok","found":true,"read":"1"}
{"client":2,"op":"get","key":"b","invoke_ns":40,"return_ns":50,"outcome":"ok","found":true,"read":"1"}`, porcupine.Illegal},
}

func TestModelVerdicts(t *testing.T) {
	for _, tc := range modelCases {
		t.Run(tc.name, func(t *testing.T) {
			recs, err := parseHistory(tc.name, strings.NewReader(tc.history))
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := checkHistory(recs, 10*time.Second); got != tc.want {
				t.Fatalf("verdict %s, want %s", got, tc.want)
			}
		})
	}
}

var badLines = []struct {
	line, wantErr string
}{
	{`{"client":0,"op":"get"`, "unexpected EOF"},
	{`not json`, "invalid character"},
	{`{"client":0,"op":"scan","key":"a","invoke_ns":0,"return_ns":1,"outcome":"ok"}`, `op "scan"`},
	{`{"client":0,"op":"put","key":"a","invoke_ns":0,"return_ns":1,"outcome":"ok"}`, "put without value"},
	{`{"client":0,"op":"get","key":"a","invoke_ns":0,"return_ns":1,"outcome":"ok"}`, "no found"},
	{`{"client":0,"op":"get","key":"a","invoke_ns":0,"return_ns":1,"outcome":"ok","found":true}`, "no read"},
	{`{"client":0,"op":"cas","key":"a","value":"1","invoke_ns":0,"return_ns":1,"outcome":"ok"}`, "no succeeded"},
	{`{"client":0,"op":"put","key":"a","value":"1","invoke_ns":5,"return_ns":1,"outcome":"ok"}`, "before invoke_ns"},
	{`{"client":0,"op":"put","key":"a","value":"1","invoke_ns":0,"return_ns":1,"outcome":"maybe"}`, `outcome "maybe"`},
	{`{"client":0,"op":"put","value":"1","invoke_ns":0,"return_ns":1,"outcome":"ok"}`, "missing key"},
	{`{"client":-1,"op":"delete","key":"a","invoke_ns":0,"return_ns":1,"outcome":"ok"}`, "negative"},
	{`{"client":0,"op":"delete","key":"a","invoke":0,"return_ns":1,"outcome":"ok"}`, `unknown field "invoke"`},
}

func TestBadLinesNameFileAndLine(t *testing.T) {
	good := `{"client":0,"op":"delete","key":"a","invoke_ns":0,"return_ns":1,"outcome":"ok"}`
	for _, tc := range badLines {
		_, err := parseHistory("h.jsonl", strings.NewReader(good+"\n\n"+tc.line+"\n"))
		if err == nil {
			t.Errorf("%s: accepted", tc.line)
			continue
		}
		if !strings.HasPrefix(err.Error(), "h.jsonl:3: ") || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%s: error %q, want h.jsonl:3 and %q", tc.line, err, tc.wantErr)
		}
	}
}

// TestCheckExitCodes runs check as the command line does: 0, 1 with the visualization
// written, 2 naming the file and line.
func TestCheckExitCodes(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.jsonl", modelCases[2].history)
	bad := write("bad.jsonl", modelCases[3].history)
	broken := write("broken.jsonl", "\n"+badLines[3].line+"\n")
	var out, errOut strings.Builder
	if code := checkMain([]string{good}, &out, &errOut); code != exitLinearizable {
		t.Fatalf("good: exit %d, %s%s", code, out.String(), errOut.String())
	}
	out.Reset()
	if code := checkMain([]string{bad}, &out, &errOut); code != exitNotLinearizable {
		t.Fatalf("bad: exit %d, %s%s", code, out.String(), errOut.String())
	}
	if fi, err := os.Stat(bad + ".html"); err != nil || fi.Size() == 0 {
		t.Fatalf("bad: no visualization (%v); output %s", err, out.String())
	}
	errOut.Reset()
	if code := checkMain([]string{broken}, &out, &errOut); code != exitBadInput {
		t.Fatalf("broken: exit %d", code)
	}
	if !strings.Contains(errOut.String(), broken+":2: put without value") {
		t.Fatalf("broken: message %q does not name the file and line", errOut.String())
	}
}
