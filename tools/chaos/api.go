// The server's HTTP API as the driver speaks it: every URL, status code and JSON shape is in
// this one file, so adjusting to the server's final encoding touches nothing else.
//
//	PUT    /kv/{key}   body = raw value          -> 200 when committed and applied
//	GET    /kv/{key}   (linearizable by default) -> 200 body = value, or 404
//	       /kv/{key}?consistency=local           -> the node's own, possibly stale, state
//	DELETE /kv/{key}                             -> 200
//	POST   /txn        {"compare":[{"key":K,"value":V|null}],
//	                    "ops":[{"op":"put","key":K,"value":V} | {"op":"delete","key":K}]}
//	                   -> 200 {"index":N,"succeeded":bool,"duplicate":bool}
//
// Keys are percent-encoded path segments; the transaction's JSON carries keys and values as
// UTF-8 strings (the driver's are ASCII), a null compare value meaning "absent". A follower
// answers writes and linearizable reads with 307 to the leader; Go's client follows it and
// re-sends the body. Other statuses: 400 malformed, 413 too large, 503 no leader.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"syscall"
)

// apiError is a request without a definite answer, or a definite refusal (Definite: the
// server did not, and will not, apply it).
type apiError struct {
	Definite bool
	Msg      string
}

func (e *apiError) Error() string { return e.Msg }

// kvURL is the URL of one key on one endpoint ("127.0.0.1:8001" or "http://127.0.0.1:8001").
func kvURL(endpoint, key string) string {
	return baseURL(endpoint) + "/kv/" + url.PathEscape(key)
}

func baseURL(endpoint string) string {
	if len(endpoint) >= 7 && (endpoint[:7] == "http://" || (len(endpoint) >= 8 && endpoint[:8] == "https://")) {
		return endpoint
	}
	return "http://" + endpoint
}

// do sends a request and classifies transport errors: a refused connection means nothing was
// sent (definite), anything else (timeout, reset) leaves the outcome unknown.
func do(ctx context.Context, c *http.Client, method, u string, body []byte, contentType string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(body))
	if err != nil {
		return 0, nil, &apiError{Definite: true, Msg: err.Error()}
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, &apiError{Definite: errors.Is(err, syscall.ECONNREFUSED), Msg: err.Error()}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, &apiError{Msg: "reading the response: " + err.Error()}
	}
	return resp.StatusCode, b, nil
}

// statusError turns an unexpected status into an error. Only what certainly applied nothing
// is definite: a 503 whose message says no leader is known (the node refused before
// proposing). Everything else (400, 413, other 503s, 500) is treated as possibly applied:
// calling an applied write "failed" would make the checker report a violation that is not
// there, while an unknown outcome only widens its search.
func statusError(code int, body []byte) error {
	msg := fmt.Sprintf("HTTP %d: %s", code, truncate(strings.TrimSpace(string(body)), 200))
	definite := code == http.StatusServiceUnavailable && strings.Contains(string(body), noLeaderMessage)
	return &apiError{Definite: definite, Msg: msg}
}

// noLeaderMessage is in the body of the server's 503 when it knows no leader to send a
// request to. If the server's wording changes, those 503s become unknown outcomes: slower to
// check, never wrong.
const noLeaderMessage = "no leader known"

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// apiPut writes value under key.
func apiPut(ctx context.Context, c *http.Client, ep, key, value string) error {
	code, body, err := do(ctx, c, http.MethodPut, kvURL(ep, key), []byte(value), "application/octet-stream")
	if err != nil {
		return err
	}
	if code != http.StatusOK && code != http.StatusNoContent {
		return statusError(code, body)
	}
	return nil
}

// apiDelete removes key.
func apiDelete(ctx context.Context, c *http.Client, ep, key string) error {
	code, body, err := do(ctx, c, http.MethodDelete, kvURL(ep, key), nil, "")
	if err != nil {
		return err
	}
	if code != http.StatusOK && code != http.StatusNoContent && code != http.StatusNotFound {
		return statusError(code, body)
	}
	return nil
}

// apiGet reads key; local asks for the node's own state instead of a linearizable read.
func apiGet(ctx context.Context, c *http.Client, ep, key string, local bool) (found bool, value string, err error) {
	u := kvURL(ep, key)
	if local {
		u += "?consistency=local"
	}
	code, body, err := do(ctx, c, http.MethodGet, u, nil, "")
	if err != nil {
		return false, "", err
	}
	switch code {
	case http.StatusOK:
		return true, string(body), nil
	case http.StatusNotFound:
		return false, "", nil
	}
	return false, "", statusError(code, body)
}

type txnCompare struct {
	Key   string  `json:"key"`
	Value *string `json:"value"` // null: the key must be absent
}

type txnOp struct {
	Op    string  `json:"op"` // "put" or "delete"
	Key   string  `json:"key"`
	Value *string `json:"value,omitempty"`
}

type txnRequest struct {
	Compare []txnCompare `json:"compare"`
	Ops     []txnOp      `json:"ops"`
}

type txnResponse struct {
	Succeeded *bool `json:"succeeded"`
}

// apiCas sets key to value if it holds expect (or is absent, expect nil), atomically.
func apiCas(ctx context.Context, c *http.Client, ep, key string, expect *string, value string) (bool, error) {
	req := txnRequest{
		Compare: []txnCompare{{Key: key, Value: expect}},
		Ops:     []txnOp{{Op: "put", Key: key, Value: &value}},
	}
	payload, err := json.Marshal(req)
	if err != nil {
		return false, &apiError{Definite: true, Msg: err.Error()}
	}
	code, body, err := do(ctx, c, http.MethodPost, baseURL(ep)+"/txn", payload, "application/json")
	if err != nil {
		return false, err
	}
	if code != http.StatusOK {
		return false, statusError(code, body)
	}
	var resp txnResponse
	if err := json.Unmarshal(body, &resp); err != nil || resp.Succeeded == nil {
		// The server answered 200, so the transaction ran, but we cannot tell how: unknown.
		return false, &apiError{Msg: "unreadable txn response: " + truncate(string(body), 200)}
	}
	return *resp.Succeeded, nil
}
