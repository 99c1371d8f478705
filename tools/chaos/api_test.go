// Tests of the HTTP encoding: which answers count as definitely not applied, and that a
// follower's 307 to the leader is followed with the body re-sent.
package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestStatusOutcomes(t *testing.T) {
	for _, tc := range []struct {
		code     int
		body     string
		definite bool
	}{
		{503, "error: no leader known yet; retry\n", true},
		{503, "error: raft stopped\n", false}, // may have been proposed
		{500, "error: disk\n", false},
		{400, "error: bad\n", false}, // possibly applied for all the client knows
		{413, "error: too big\n", false},
	} {
		err := statusError(tc.code, []byte(tc.body)).(*apiError)
		if err.Definite != tc.definite {
			t.Errorf("%d %q: definite %v, want %v", tc.code, tc.body, err.Definite, tc.definite)
		}
	}
}

func TestRedirectToLeaderKeepsTheBody(t *testing.T) {
	var gotPut, gotTxn string
	leader := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		switch r.URL.Path {
		case "/kv/a b":
			gotPut = string(b)
			_, _ = io.WriteString(w, `{"index":1,"succeeded":true,"duplicate":false}`)
		case "/txn":
			gotTxn = string(b)
			_, _ = io.WriteString(w, `{"index":2,"succeeded":false,"duplicate":false}`)
		}
	}))
	defer leader.Close()
	follower := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", leader.URL+r.URL.RequestURI())
		w.WriteHeader(http.StatusTemporaryRedirect)
	}))
	defer follower.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c := &http.Client{}
	if err := apiPut(ctx, c, follower.URL, "a b", "v1"); err != nil || gotPut != "v1" {
		t.Fatalf("put through a redirect: %v, leader got %q", err, gotPut)
	}
	ok, err := apiCas(ctx, c, follower.URL, "a b", nil, "v2")
	if err != nil || ok {
		t.Fatalf("cas through a redirect: %v %v", ok, err)
	}
	var req map[string]interface{}
	if err := json.Unmarshal([]byte(gotTxn), &req); err != nil {
		t.Fatalf("leader got %q: %v", gotTxn, err)
	}
	want := `{"compare":[{"key":"a b","value":null}],"ops":[{"op":"put","key":"a b","value":"v2"}]}`
	if gotTxn != want {
		t.Fatalf("txn body %s, want %s", gotTxn, want)
	}
}
