// History records: the JSON-lines file the driver writes and the checker reads, with the
// validation that turns a malformed line into an error naming the file and line.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

// Operation kinds.
const (
	OpPut    = "put"
	OpGet    = "get"
	OpDelete = "delete"
	OpCas    = "cas"
)

// Outcomes of an operation as the client saw it.
const (
	// OutcomeOK: the server answered and the answer is the result.
	OutcomeOK = "ok"
	// OutcomeUnknown: no definite answer (timeout, reset connection, 5xx): a write may or
	// may not have been applied, now or later.
	OutcomeUnknown = "unknown"
	// OutcomeFail: definitely not applied (the connection was refused before anything was
	// sent, or the server rejected the request as malformed).
	OutcomeFail = "fail"
)

// Record is one operation of a history, one JSON object per line.
//
// Inputs: Value is the value written by a put, or the new value of a cas; Expect is the value
// a cas compares against, null (or missing) meaning the key must be absent.
// Results (only meaningful when Outcome is "ok"): Found and Read for a get, Succeeded for a
// cas. Pointers tell a missing field from a zero one, so validation can insist on them.
type Record struct {
	Client    int     `json:"client"`
	Op        string  `json:"op"`
	Key       string  `json:"key"`
	Value     *string `json:"value,omitempty"`
	Expect    *string `json:"expect,omitempty"`
	InvokeNs  int64   `json:"invoke_ns"`
	ReturnNs  int64   `json:"return_ns"`
	Outcome   string  `json:"outcome"`
	Found     *bool   `json:"found,omitempty"`
	Read      *string `json:"read,omitempty"`
	Succeeded *bool   `json:"succeeded,omitempty"`
	Error     string  `json:"error,omitempty"`
}

// validate says what is wrong with a record, or nil.
func (r *Record) validate() error {
	if r.Client < 0 {
		return fmt.Errorf("client %d is negative", r.Client)
	}
	if r.Key == "" {
		return fmt.Errorf("missing key")
	}
	if r.InvokeNs < 0 {
		return fmt.Errorf("invoke_ns %d is negative", r.InvokeNs)
	}
	switch r.Outcome {
	case OutcomeOK, OutcomeUnknown, OutcomeFail:
	default:
		return fmt.Errorf("outcome %q is not one of ok, unknown, fail", r.Outcome)
	}
	// An operation whose outcome is unknown may have no return time worth the name; the
	// checker makes it infinite anyway.
	if r.Outcome == OutcomeOK && r.ReturnNs < r.InvokeNs {
		return fmt.Errorf("return_ns %d is before invoke_ns %d", r.ReturnNs, r.InvokeNs)
	}
	ok := r.Outcome == OutcomeOK
	switch r.Op {
	case OpPut:
		if r.Value == nil {
			return fmt.Errorf("put without value")
		}
	case OpDelete:
	case OpGet:
		if ok && r.Found == nil {
			return fmt.Errorf("get with outcome ok but no found")
		}
		if ok && *r.Found && r.Read == nil {
			return fmt.Errorf("get found a value but has no read")
		}
	case OpCas:
		if r.Value == nil {
			return fmt.Errorf("cas without value")
		}
		if ok && r.Succeeded == nil {
			return fmt.Errorf("cas with outcome ok but no succeeded")
		}
	default:
		return fmt.Errorf("op %q is not one of put, get, cas, delete", r.Op)
	}
	return nil
}

// ReadHistory reads and validates a history file. Errors name the file and the line.
func ReadHistory(path string) ([]Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseHistory(path, f)
}

func parseHistory(name string, r io.Reader) ([]Record, error) {
	var out []Record
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		var rec Record
		dec := json.NewDecoder(strings.NewReader(text))
		// A misspelt field would otherwise be silently dropped and the record checked as
		// something it is not.
		dec.DisallowUnknownFields()
		if err := dec.Decode(&rec); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", name, line, err)
		}
		if err := rec.validate(); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", name, line, err)
		}
		out = append(out, rec)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s:%d: %v", name, line+1, err)
	}
	return out, nil
}

// HistoryWriter appends records to a file, one line each; safe for one goroutine (the driver
// funnels records through a channel).
type HistoryWriter struct {
	f   *os.File
	w   *bufio.Writer
	enc *json.Encoder
}

// CreateHistory creates (or truncates) a history file.
func CreateHistory(path string) (*HistoryWriter, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	w := bufio.NewWriter(f)
	return &HistoryWriter{f: f, w: w, enc: json.NewEncoder(w)}, nil
}

// Write appends one record.
func (h *HistoryWriter) Write(r Record) error { return h.enc.Encode(r) }

// Close flushes and closes the file.
func (h *HistoryWriter) Close() error {
	if err := h.w.Flush(); err != nil {
		h.f.Close()
		return err
	}
	return h.f.Close()
}
