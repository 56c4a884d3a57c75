package engagement_test

import (
	"context"
	"strings"
	"testing"
)

// TestSDKTrackExposesRetryAfter: a browser page may read only the response
// headers CORS exposes, so the SDK can honour the Retry-After of a 503 only
// when /sdk/track exposes it to the allowed origin.
func TestSDKTrackExposesRetryAfter(t *testing.T) {
	e := newEnv(t, nil)
	headers := map[string]string{"Authorization": "Bearer " + e.pk, "Content-Type": "text/plain;charset=UTF-8", "Origin": "https://site.example"}
	body := `{"name":"page","timestamp":1763726400000,"anonymousId":"3b9d4c6e-1111-4c2a-9a55-0c2f7e0f0002"}`

	resp, b := e.do(t, "POST", "/sdk/track", strings.NewReader(body), headers)
	if resp.StatusCode != 200 || !strings.Contains(resp.Header.Get("Access-Control-Expose-Headers"), "Retry-After") {
		t.Errorf("200: %d %s expose %q", resp.StatusCode, b, resp.Header.Get("Access-Control-Expose-Headers"))
	}

	// The store fails: 503 with Retry-After, readable by the page.
	if _, err := e.db.ExecContext(context.Background(), `ALTER TABLE tracked_events RENAME TO tracked_events_away`); err != nil {
		t.Fatal(err)
	}
	body = strings.Replace(body, "0002", "0003", 1)
	resp, b = e.do(t, "POST", "/sdk/track", strings.NewReader(body), headers)
	h := resp.Header
	if resp.StatusCode != 503 || h.Get("Retry-After") != "1" || h.Get("Access-Control-Allow-Origin") != "https://site.example" ||
		!strings.Contains(h.Get("Access-Control-Expose-Headers"), "Retry-After") {
		t.Errorf("503: %d %s %v", resp.StatusCode, b, h)
	}

	// An origin the key does not allow gets neither grant.
	headers["Origin"] = "https://evil.example"
	resp, _ = e.do(t, "POST", "/sdk/track", strings.NewReader(body), headers)
	if resp.StatusCode != 403 || resp.Header.Get("Access-Control-Allow-Origin") != "" || resp.Header.Get("Access-Control-Expose-Headers") != "" {
		t.Errorf("wrong origin: %d %v", resp.StatusCode, resp.Header)
	}
}
