// The key-value model the checker gives porcupine, partitioned by key, and the conversion of a
// recorded history into porcupine operations.
package main

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/anishathalye/porcupine"
)

// kvInput is what an operation asked for.
type kvInput struct {
	Op     string
	Key    string
	Value  string // put's value, cas's new value
	Expect string // cas: the value compared against...
	Absent bool   // ...or, when set, the key must be absent
}

// kvOutput is what the client saw. Unknown: no answer, so any result is possible.
type kvOutput struct {
	Unknown   bool
	Found     bool
	Read      string
	Succeeded bool
}

// kvState is one key's state (the model is partitioned by key). A comparable struct, so
// porcupine's default == serves as equality.
type kvState struct {
	Exists bool
	Value  string
}

// kvStep is the sequential specification of one key: may the operation, applied to state,
// have produced output, and what state does it leave?
func kvStep(state, input, output interface{}) (bool, interface{}) {
	s := state.(kvState)
	in := input.(kvInput)
	out := output.(kvOutput)
	switch in.Op {
	case OpPut:
		return true, kvState{Exists: true, Value: in.Value}
	case OpDelete:
		return true, kvState{}
	case OpGet:
		if out.Unknown {
			return true, s
		}
		if out.Found != s.Exists || (out.Found && out.Read != s.Value) {
			return false, s
		}
		return true, s
	case OpCas:
		holds := !s.Exists
		if !in.Absent {
			holds = s.Exists && s.Value == in.Expect
		}
		next := s
		if holds {
			next = kvState{Exists: true, Value: in.Value}
		}
		// With an unknown outcome the cas is still deterministic given the state it is
		// linearized at: it applied if and only if the comparison held there.
		if !out.Unknown && out.Succeeded != holds {
			return false, s
		}
		return true, next
	}
	panic("unknown op " + in.Op)
}

func describeOp(input, output interface{}) string {
	in := input.(kvInput)
	out := output.(kvOutput)
	var s string
	switch in.Op {
	case OpPut:
		s = fmt.Sprintf("put(%q, %q)", in.Key, in.Value)
	case OpDelete:
		s = fmt.Sprintf("delete(%q)", in.Key)
	case OpGet:
		s = fmt.Sprintf("get(%q)", in.Key)
	case OpCas:
		exp := fmt.Sprintf("%q", in.Expect)
		if in.Absent {
			exp = "absent"
		}
		s = fmt.Sprintf("cas(%q, %s -> %q)", in.Key, exp, in.Value)
	}
	switch {
	case out.Unknown:
		return s + " -> unknown"
	case in.Op == OpGet && out.Found:
		return fmt.Sprintf("%s -> %q", s, out.Read)
	case in.Op == OpGet:
		return s + " -> not found"
	case in.Op == OpCas:
		return fmt.Sprintf("%s -> %v", s, out.Succeeded)
	}
	return s + " -> ok"
}

func describeState(state interface{}) string {
	s := state.(kvState)
	if !s.Exists {
		return "absent"
	}
	return fmt.Sprintf("%q", s.Value)
}

// partitionByKey splits a history into one history per key: operations on different keys
// never constrain each other in this model, and each partition is checked alone (a much
// smaller search than the whole history).
func partitionByKey(history []porcupine.Operation) [][]porcupine.Operation {
	byKey := map[string][]porcupine.Operation{}
	var keys []string
	for _, op := range history {
		k := op.Input.(kvInput).Key
		if _, ok := byKey[k]; !ok {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], op)
	}
	sort.Strings(keys)
	out := make([][]porcupine.Operation, 0, len(keys))
	for _, k := range keys {
		out = append(out, byKey[k])
	}
	return out
}

// kvModel is the model given to porcupine.
var kvModel = porcupine.Model{
	Partition:         partitionByKey,
	Init:              func() interface{} { return kvState{} },
	Step:              kvStep,
	DescribeOperation: describeOp,
	DescribeState:     describeState,
	DescribeOperationMetadata: func(info interface{}) string {
		if info == nil {
			return ""
		}
		return info.(string)
	},
}

// toOperations converts records into porcupine operations. Operations that definitely did
// not apply are left out, and so are reads without an answer (they changed nothing and
// constrain nothing). A write with an unknown outcome returns at infinity: it may take
// effect at any moment after its invocation, or never (linearized after everything else),
// as porcupine's and Jepsen's own histories treat them.
func toOperations(recs []Record) []porcupine.Operation {
	ops := make([]porcupine.Operation, 0, len(recs))
	for _, r := range recs {
		if r.Outcome == OutcomeFail {
			continue
		}
		unknown := r.Outcome == OutcomeUnknown
		if unknown && r.Op == OpGet {
			continue
		}
		in := kvInput{Op: r.Op, Key: r.Key}
		if r.Value != nil {
			in.Value = *r.Value
		}
		if r.Op == OpCas {
			if r.Expect == nil {
				in.Absent = true
			} else {
				in.Expect = *r.Expect
			}
		}
		out := kvOutput{Unknown: unknown}
		if r.Found != nil {
			out.Found = *r.Found
		}
		if r.Read != nil {
			out.Read = *r.Read
		}
		if r.Succeeded != nil {
			out.Succeeded = *r.Succeeded
		}
		ret := r.ReturnNs
		if unknown {
			ret = math.MaxInt64
		}
		var meta interface{}
		if r.Error != "" {
			meta = r.Error
		}
		ops = append(ops, porcupine.Operation{
			ClientId: r.Client,
			Input:    in,
			Call:     r.InvokeNs,
			Output:   out,
			Return:   ret,
			Metadata: meta,
		})
	}
	return ops
}

// checkHistory checks records for linearizability. A zero timeout means no limit; with one,
// the result may be porcupine.Unknown.
func checkHistory(recs []Record, timeout time.Duration) (porcupine.CheckResult, porcupine.LinearizationInfo) {
	return porcupine.CheckOperationsVerbose(kvModel, toOperations(recs), timeout)
}
