package engagement_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	apiengagement "github.com/chainlens/chainlens/api/engagement"
	"github.com/chainlens/chainlens/api/route"

	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/api"
	"github.com/chainlens/chainlens/engagement"
	"github.com/chainlens/chainlens/internal/apitest"
)

type trackAnswer struct {
	OK       bool     `json:"ok"`
	ID       string   `json:"id"`
	Warnings []string `json:"warnings"`
}

func (e *env) track(t testing.TB, body string) (int, trackAnswer, []byte) {
	t.Helper()
	resp, b := e.do(t, "POST", "/track", strings.NewReader(body), map[string]string{"Authorization": "Bearer " + e.sk, "Content-Type": "application/json"})
	var a trackAnswer
	if resp.StatusCode == 200 {
		if err := json.Unmarshal(b, &a); err != nil {
			t.Fatal(err)
		}
	}
	return resp.StatusCode, a, b
}

const validEvent = `{"name":"open_position","identity":{"type":"address","id":"osmo1abc"},"attributes":{"tokens":[{"amount":1.5,"denom":"uosmo"}],"amount_usd":3},"timestamp":1763726400000}`

func TestTrackValidation(t *testing.T) {
	e := newEnv(t, nil)
	ms := now.UnixMilli()
	ev := func(fields string) string { return `{` + fields + `}` }
	base := `"name":"trade_made","identity":{"type":"address","id":"osmo1abc"}`
	cases := []struct {
		name, body string
		status     int
		field      string
	}{
		{"valid ms", ev(base + fmt.Sprintf(`,"timestamp":%d`, ms)), 200, ""},
		{"valid seconds", ev(base + `,"timestamp":1763700000`), 200, ""},
		{"valid ISO", ev(base + `,"timestamp":"2026-11-21T10:00:00.123Z"`), 200, ""},
		{"valid ISO without zone", ev(base + `,"timestamp":"2026-11-21T10:00:00"`), 200, ""},
		{"valid ISO, basic offset", ev(base + `,"timestamp":"2026-11-21T10:00:00+0100"`), 200, ""},
		{"valid ISO, hour offset", ev(base + `,"timestamp":"2026-11-21T10:00:00.5-03"`), 200, ""},
		{"valid ISO, no seconds", ev(base + `,"timestamp":"2026-11-21T10:01Z"`), 200, ""},
		{"valid canonical, attributes, meta", ev(`"name":"claim_rewards","identity":{"type":"address","id":"osmo1x","canonical":"osmo1x"},"attributes":{"tokens":[],"amount_usd":0,"x":{"y":[1,"2",null]}},"meta":{"click_id":"clk_1","messageId":"m-1"},"timestamp":1`), 200, ""},
		{"not JSON", `{"name":`, 400, "body"},
		{"array", `[]`, 400, "body"},
		{"trailing data", validEvent + `{}`, 400, "body"},
		{"missing name", ev(`"identity":{"type":"address","id":"a"},"timestamp":1`), 400, "name"},
		{"empty name", ev(`"name":"","identity":{"type":"address","id":"a"},"timestamp":1`), 400, "name"},
		{"long name", ev(`"name":"` + strings.Repeat("n", 201) + `","identity":{"type":"address","id":"a"},"timestamp":1`), 400, "name"},
		{"numeric name", ev(`"name":5,"identity":{"type":"address","id":"a"},"timestamp":1`), 400, "name"},
		{"missing identity", ev(`"name":"x","timestamp":1`), 400, "identity"},
		{"identity string", ev(`"name":"x","identity":"osmo1","timestamp":1`), 400, "identity"},
		{"identity type", ev(`"name":"x","identity":{"type":"email","id":"a"},"timestamp":1`), 400, "identity.type"},
		{"identity id missing", ev(`"name":"x","identity":{"type":"address"},"timestamp":1`), 400, "identity.id"},
		{"identity canonical", ev(`"name":"x","identity":{"type":"address","id":"a","canonical":7},"timestamp":1`), 400, "identity.canonical"},
		{"missing timestamp", ev(base), 400, "timestamp"},
		{"boolean timestamp", ev(base + `,"timestamp":true`), 400, "timestamp"},
		{"negative timestamp", ev(base + `,"timestamp":-5`), 400, "timestamp"},
		{"unparsable timestamp", ev(base + `,"timestamp":"yesterday"`), 400, "timestamp"},
		{"25 h in the future", ev(base + fmt.Sprintf(`,"timestamp":%d`, now.Add(25*time.Hour).UnixMilli())), 400, "timestamp"},
		{"25 h in the future, ISO", ev(base + `,"timestamp":"` + now.Add(25*time.Hour).Format(time.RFC3339) + `"`), 400, "timestamp"},
		{"huge timestamp", ev(base + `,"timestamp":1e300`), 400, "timestamp"},
		{"attributes string", ev(base + `,"attributes":"x","timestamp":1`), 400, "attributes"},
		{"number out of range", ev(base + `,"attributes":{"big":1e400},"timestamp":1`), 400, "attributes.big"},
		{"number with 20,000 decimals", ev(base + `,"attributes":{"f":0.` + strings.Repeat("0", 20000) + `1},"timestamp":1`), 400, "attributes.f"},
		{"tiny exponent", ev(base + `,"attributes":{"f":1e-20000},"timestamp":1`), 400, "attributes.f"},
		{"year 0", ev(base + `,"timestamp":"0000-01-01T00:00:00Z"`), 400, "timestamp"},
		{"NUL in attribute", ev(base + `,"attributes":{"s":"a\u0000b"},"timestamp":1`), 400, "attributes.s"},
		{"meta array", ev(base + `,"meta":[],"timestamp":1`), 400, "meta"},
		{"too deep", ev(base + `,"attributes":{"a":` + strings.Repeat(`[`, 40) + strings.Repeat(`]`, 40) + `},"timestamp":1`), 400, "attributes.a" + strings.Repeat("[0]", 31)},
	}
	for _, c := range cases {
		status, a, body := e.track(t, c.body)
		if status != c.status || invalidField(body) != c.field {
			t.Errorf("%s: %d %s, want %d naming %q", c.name, status, body, c.status, c.field)
		}
		if status == 200 && (!a.OK || !strings.HasPrefix(a.ID, "evt_")) {
			t.Errorf("%s: answer %s", c.name, body)
		}
	}
	if n := e.count(t, `SELECT count(*) FROM tracked_events`); n != 8 {
		t.Errorf("%d events stored, want 8", n)
	}

	// A reserved member of the wrong type never refuses the event: it is
	// stored as sent, ignored, and the answer says so.
	for i, c := range []struct {
		name, fields string
		warnings     []string
	}{
		{"tokens not array", `,"attributes":{"tokens":"x"}`, []string{"attributes.tokens must be an array of {amount: number, denom: string}; stored as sent, not used for valuation"}},
		{"token not object", `,"attributes":{"tokens":[1]}`, []string{"attributes.tokens[0] must be an object {amount: number, denom: string}; stored as sent, not used for valuation"}},
		{"token amount string", `,"attributes":{"tokens":[{"amount":"1","denom":"uosmo"}]}`, []string{"attributes.tokens[0].amount must be a number; stored as sent, not used for valuation"}},
		{"token denom missing", `,"attributes":{"tokens":[{"amount":1}]}`, []string{"attributes.tokens[0].denom must be a non-empty string; stored as sent, not used for valuation"}},
		{"amount_usd string", `,"attributes":{"amount_usd":"5"}`, []string{"attributes.amount_usd must be a number; stored as sent, not used for valuation"}},
		{"messageId number", `,"meta":{"messageId":5}`, []string{"meta.messageId must be a string; ignored"}},
		{"click_id object", `,"meta":{"click_id":{"a":1}}`, []string{"meta.click_id must be a string; ignored"}},
		{"two of them", `,"attributes":{"amount_usd":true},"meta":{"click_id":7}`, []string{"attributes.amount_usd must be a number; stored as sent, not used for valuation", "meta.click_id must be a string; ignored"}},
	} {
		status, a, body := e.track(t, ev(base+c.fields+fmt.Sprintf(`,"timestamp":%d`, 1000+i)))
		if status != 200 || !a.OK || !slices.Equal(a.Warnings, c.warnings) {
			t.Errorf("%s: %d %s, want 200 with warnings %q", c.name, status, body, c.warnings)
		}
		var stored struct {
			Attributes json.RawMessage `bun:"attributes"`
			Meta       json.RawMessage `bun:"meta"`
		}
		if err := e.db.NewRaw(`SELECT attributes, meta FROM tracked_events WHERE id = ?`, a.ID).Scan(context.Background(), &stored); err != nil {
			t.Fatal(err)
		}
		var sent, got map[string]any
		_ = json.Unmarshal([]byte(`{"attributes":{},"meta":{}`+c.fields+`}`), &sent)
		_ = json.Unmarshal([]byte(`{"attributes":`+string(stored.Attributes)+`,"meta":`+string(stored.Meta)+`}`), &got)
		if !reflect.DeepEqual(sent, got) {
			t.Errorf("%s: stored %v, want the members as sent %v", c.name, got, sent)
		}
	}

	auth := "Bearer " + e.sk
	for _, c := range []struct {
		name    string
		headers map[string]string
		body    io.Reader
		status  int
	}{
		{"text/plain", map[string]string{"Authorization": auth, "Content-Type": "text/plain"}, strings.NewReader(validEvent), 415},
		{"no content type", map[string]string{"Authorization": auth}, strings.NewReader(validEvent), 415},
		{"charset", map[string]string{"Authorization": auth, "Content-Type": "application/json; charset=utf-8"}, strings.NewReader(validEvent), 200},
		{"no key", map[string]string{"Content-Type": "application/json"}, strings.NewReader(validEvent), 401},
		{"publishable key", map[string]string{"Authorization": "Bearer " + e.pk, "Content-Type": "application/json"}, strings.NewReader(validEvent), 403},
		{"over 32 KB with length", map[string]string{"Authorization": auth, "Content-Type": "application/json"},
			strings.NewReader(`{"name":"` + strings.Repeat("x", 33<<10) + `"}`), 413},
		{"over 32 KB chunked", map[string]string{"Authorization": auth, "Content-Type": "application/json"},
			io.MultiReader(strings.NewReader(`{"name":"` + strings.Repeat("x", 33<<10) + `"}`)), 413},
	} {
		resp, body := e.do(t, "POST", "/track", c.body, c.headers)
		if resp.StatusCode != c.status {
			t.Errorf("%s: %d %s, want %d", c.name, resp.StatusCode, body, c.status)
		}
		if c.status >= 400 && !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/problem+json") {
			t.Errorf("%s: content type %q", c.name, resp.Header.Get("Content-Type"))
		}
	}
}

func TestTrackDedupe(t *testing.T) {
	e := newEnv(t, nil)
	resp, raw := e.do(t, "POST", "/track", strings.NewReader(validEvent), map[string]string{"Authorization": "Bearer " + e.sk, "Content-Type": "application/json"})
	_, doc := e.do(t, "GET", "/openapi.json", nil, nil)
	apitest.Validate(t, doc, "POST", "/track", resp, raw)
	_, first, _ := e.track(t, validEvent)
	_, again, _ := e.track(t, validEvent)
	if first.ID == "" || again.ID != first.ID {
		t.Fatalf("duplicate answered %q, first %q", again.ID, first.ID)
	}
	// The same instant in seconds is the same event.
	_, secs, _ := e.track(t, strings.Replace(validEvent, "1763726400000", "1763726400", 1))
	if secs.ID != first.ID {
		t.Errorf("seconds spelling answered %q, want %q", secs.ID, first.ID)
	}
	// Reordered attributes are the same event.
	_, reordered, _ := e.track(t, `{"timestamp":1763726400000,"attributes":{"amount_usd":3,"tokens":[{"denom":"uosmo","amount":1.5}]},"identity":{"id":"osmo1abc","type":"address"},"name":"open_position"}`)
	if reordered.ID != first.ID {
		t.Errorf("reordered answered %q, want %q", reordered.ID, first.ID)
	}
	// An explicit messageId wins over the content.
	_, m1, _ := e.track(t, `{"name":"a","identity":{"type":"address","id":"x"},"meta":{"messageId":"msg-1"},"timestamp":1}`)
	_, m2, _ := e.track(t, `{"name":"b","identity":{"type":"address","id":"y"},"meta":{"messageId":"msg-1"},"timestamp":2}`)
	if m1.ID == "" || m2.ID != m1.ID || m1.ID == first.ID {
		t.Errorf("messageId: %q then %q", m1.ID, m2.ID)
	}
	if n := e.count(t, `SELECT count(*) FROM tracked_events`); n != 2 {
		t.Errorf("%d events stored, want 2", n)
	}
	// After the 24 h window the key is free again: a new event.
	if _, err := e.db.ExecContext(context.Background(), `UPDATE tracked_event_dedupe SET first_seen = first_seen - interval '25 hours'`); err != nil {
		t.Fatal(err)
	}
	_, later, _ := e.track(t, validEvent)
	if later.ID == "" || later.ID == first.ID {
		t.Errorf("after the window: %q, first %q", later.ID, first.ID)
	}
	var storedName, canonicalAttrs string
	if err := e.db.QueryRowContext(context.Background(), `SELECT name, attributes::text FROM tracked_events WHERE id = ?`, first.ID).Scan(&storedName, &canonicalAttrs); err != nil {
		t.Fatal(err)
	}
	if storedName != "open_position" || !strings.Contains(canonicalAttrs, `"uosmo"`) {
		t.Errorf("stored %s %s", storedName, canonicalAttrs)
	}
}

func TestStandardAttributesCounted(t *testing.T) {
	var svc *apiengagement.Service
	e := newEnv(t, func(db *bun.DB) api.Handlers {
		h := api.Handlers{JSON: map[route.ID]api.Handler{}, Raw: map[route.ID]api.RawHandler{}}
		svc = apiengagement.NewService(db, db, engagement.RecorderOptions{})
		svc.Register(h)
		return h
	})
	for _, body := range []string{
		`{"name":"open_position","identity":{"type":"address","id":"a"},"timestamp":1}`,
		`{"name":"claim_rewards","identity":{"type":"address","id":"a"},"attributes":{"amount_usd":1},"timestamp":1}`,
		`{"name":"wallet_connected","identity":{"type":"address","id":"a"},"timestamp":1}`,
	} {
		if status, _, b := e.track(t, body); status != 200 {
			t.Fatalf("%d %s", status, b)
		}
	}
	got := svc.Recorder.MissingRecommended()
	want := map[string]int64{"open_position.tokens": 1, "open_position.amount_usd": 1, "claim_rewards.tokens": 1}
	if len(got) != len(want) {
		t.Fatalf("missing %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("missing %v, want %v", got, want)
		}
	}
}

func TestSDKTrack(t *testing.T) {
	e := newEnv(t, nil)
	body := `{"name":"page","attributes":{},"meta":{"page":{"path":"/"},"browser":{"userAgent":"x","screenWidth":1}},"timestamp":1763726400000,"anonymousId":"3b9d4c6e-1111-4c2a-9a55-0c2f7e0f0001","userId":"osmo1xyz"}`
	pkFrom := func(origin string) map[string]string {
		return map[string]string{"Authorization": "Bearer " + e.pk, "Content-Type": "text/plain;charset=UTF-8", "Origin": origin}
	}
	resp, b := e.do(t, "POST", "/sdk/track", strings.NewReader(body), pkFrom("https://site.example"))
	var a trackAnswer
	_ = json.Unmarshal(b, &a)
	if resp.StatusCode != 200 || !a.OK || !strings.HasPrefix(a.ID, "evt_") {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	if got := resp.Header.Get("Access-Control-Allow-Origin"); got != "https://site.example" {
		t.Errorf("Access-Control-Allow-Origin %q", got)
	}
	var idType, idID, anon string
	if err := e.db.QueryRowContext(context.Background(), `SELECT identity_type, identity_id, anonymous_id FROM tracked_events WHERE id = ?`, a.ID).Scan(&idType, &idID, &anon); err != nil {
		t.Fatal(err)
	}
	if idType != "address" || idID != "osmo1xyz" || anon != "3b9d4c6e-1111-4c2a-9a55-0c2f7e0f0001" {
		t.Errorf("stored identity %s %s %s", idType, idID, anon)
	}
	// Resent by the SDK after a timeout: the same id.
	_, b = e.do(t, "POST", "/sdk/track", strings.NewReader(body), pkFrom("https://site.example"))
	var again trackAnswer
	_ = json.Unmarshal(b, &again)
	if again.ID != a.ID {
		t.Errorf("resend answered %q, want %q", again.ID, a.ID)
	}

	// Wrong origin: 403 and no CORS grant.
	resp, b = e.do(t, "POST", "/sdk/track", strings.NewReader(body), pkFrom("https://evil.example"))
	if resp.StatusCode != 403 || resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("wrong origin: %d %s %q", resp.StatusCode, b, resp.Header.Get("Access-Control-Allow-Origin"))
	}
	// Errors from the allowed origin carry the grant so the browser can read them.
	for _, c := range []struct {
		name, ct, body, field string
		status                int
	}{
		{"xml", "application/xml", body, "", 415},
		{"no anonymousId", "text/plain", `{"name":"page","timestamp":1}`, "anonymousId", 400},
		{"string timestamp", "text/plain", `{"name":"page","timestamp":"2026-01-01T00:00:00Z","anonymousId":"a"}`, "timestamp", 400},
		{"userId number", "application/json", `{"name":"page","timestamp":1,"anonymousId":"a","userId":5}`, "userId", 400},
	} {
		h := pkFrom("https://site.example")
		h["Content-Type"] = c.ct
		resp, b := e.do(t, "POST", "/sdk/track", strings.NewReader(c.body), h)
		if resp.StatusCode != c.status || invalidField(b) != c.field || resp.Header.Get("Access-Control-Allow-Origin") != "https://site.example" {
			t.Errorf("%s: %d %s %q", c.name, resp.StatusCode, b, resp.Header.Get("Access-Control-Allow-Origin"))
		}
	}
	// Anonymous event with a secret key and application/json.
	resp, b = e.do(t, "POST", "/sdk/track", strings.NewReader(`{"name":"identify","attributes":{"id":"u","traits":{}},"timestamp":1763726400000,"anonymousId":"anon-2"}`),
		map[string]string{"Authorization": "Bearer " + e.sk, "Content-Type": "application/json"})
	if resp.StatusCode != 200 {
		t.Errorf("secret key: %d %s", resp.StatusCode, b)
	}
	if n := e.count(t, `SELECT count(*) FROM tracked_events WHERE identity_type = 'anonymous' AND identity_id = 'anon-2' AND source = 'sdk'`); n != 1 {
		t.Errorf("anonymous event rows %d", n)
	}

	// Preflight.
	resp, _ = e.do(t, "OPTIONS", "/sdk/track", nil, map[string]string{"Origin": "https://site.example", "Access-Control-Request-Method": "POST",
		"Access-Control-Request-Headers": "authorization,content-type"})
	h := resp.Header
	if resp.StatusCode != 204 || h.Get("Access-Control-Allow-Origin") != "https://site.example" || h.Get("Access-Control-Allow-Methods") != "POST, OPTIONS" ||
		h.Get("Access-Control-Allow-Headers") != "Authorization, Content-Type" || h.Get("Access-Control-Max-Age") != "86400" {
		t.Errorf("preflight: %d %v", resp.StatusCode, h)
	}
}

// TestTrackDurability fires 2000 concurrent /track requests and checks that
// every id answered 200 is stored exactly once (and nothing else is).
func TestTrackDurability(t *testing.T) {
	var svc *apiengagement.Service
	e := newEnv(t, func(db *bun.DB) api.Handlers {
		h := api.Handlers{JSON: map[route.ID]api.Handler{}, Raw: map[route.ID]api.RawHandler{}}
		svc = apiengagement.NewService(db, db, engagement.RecorderOptions{})
		svc.Register(h)
		return h
	})
	const n = 2000
	var (
		mu     sync.Mutex
		ids    = map[string]int{}
		status = map[int]int{}
		wg     sync.WaitGroup
		start  = make(chan struct{})
	)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Every 10th event repeats the previous one's messageId: a duplicate.
			msg := i
			if i%10 == 9 {
				msg = i - 1
			}
			body := fmt.Sprintf(`{"name":"trade_made","identity":{"type":"address","id":"osmo1w%d"},"meta":{"messageId":"m-%d"},"attributes":{"i":%d},"timestamp":%d}`,
				i, msg, i, now.UnixMilli())
			req, _ := http.NewRequest("POST", e.srv.URL+"/track", strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+e.sk)
			req.Header.Set("Content-Type", "application/json")
			<-start // all 2000 in flight at once
			resp, err := e.client.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			mu.Lock()
			defer mu.Unlock()
			status[resp.StatusCode]++
			if resp.StatusCode == 200 {
				var a trackAnswer
				if err := json.Unmarshal(b, &a); err != nil || a.ID == "" {
					t.Errorf("answer %s", b)
				}
				ids[a.ID]++
			} else if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" {
				t.Errorf("status %d %s", resp.StatusCode, b)
			}
		}()
	}
	close(start)
	wg.Wait()
	st := svc.Recorder.Stats()
	t.Logf("statuses %v, %d distinct ids, recorder %+v", status, len(ids), st)
	if st.Batches >= int64(status[200]) || st.Recorded != int64(len(ids)) || st.Recorded+st.Duplicates != int64(status[200]) {
		t.Errorf("recorder stats %+v for %d answers: events were not batched or not counted", st, status[200])
	}
	if status[200] < n*9/10 {
		t.Errorf("only %d of %d answered 200", status[200], n)
	}
	var stored []string
	if err := e.db.NewRaw(`SELECT id FROM tracked_events`).Scan(context.Background(), &stored); err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, id := range stored {
		seen[id]++
	}
	for id := range ids {
		if seen[id] != 1 {
			t.Errorf("id %s stored %d times", id, seen[id])
		}
	}
	if len(stored) != len(seen) || len(seen) != len(ids) {
		t.Errorf("%d rows, %d distinct stored, %d distinct answered", len(stored), len(seen), len(ids))
	}
	if status[200] == n && len(ids) != n*9/10 {
		t.Errorf("%d distinct ids, want %d (one per messageId)", len(ids), n*9/10)
	}
}

// TestQueueFullIs503 blocks the committer on a table lock so the bounded
// queue fills: further events get 503 with Retry-After, and the queued ones
// are committed once the lock goes.
func TestQueueFullIs503(t *testing.T) {
	e := newEnv(t, func(db *bun.DB) api.Handlers {
		h := api.Handlers{JSON: map[route.ID]api.Handler{}, Raw: map[route.ID]api.RawHandler{}}
		apiengagement.NewService(db, db, engagement.RecorderOptions{QueueSize: 2, BatchSize: 1, Committers: 1}).Register(h)
		return h
	})
	ctx := context.Background()
	tx, err := e.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, `LOCK TABLE tracked_event_dedupe IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	codes := make(chan int, 3)
	for i := range 3 { // one in the (single) committer, two queued
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, _, _ := e.track(t, fmt.Sprintf(`{"name":"q","identity":{"type":"address","id":"a"},"timestamp":%d}`, i+1))
			codes <- code
		}()
		time.Sleep(200 * time.Millisecond)
	}
	resp, b := e.do(t, "POST", "/track", strings.NewReader(`{"name":"q","identity":{"type":"address","id":"a"},"timestamp":99}`),
		map[string]string{"Authorization": "Bearer " + e.sk, "Content-Type": "application/json"})
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") != "1" {
		t.Errorf("full queue: %d %s Retry-After %q", resp.StatusCode, b, resp.Header.Get("Retry-After"))
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(codes)
	for c := range codes {
		if c != 200 {
			t.Errorf("queued event answered %d", c)
		}
	}
	if n := e.count(t, `SELECT count(*) FROM tracked_events`); n != 3 {
		t.Errorf("%d events stored, want 3", n)
	}
}

func TestStaleDedupeClaimsPruned(t *testing.T) {
	e := newEnv(t, nil)
	if _, err := e.db.ExecContext(context.Background(), `INSERT INTO tracked_event_dedupe (key_id, dedupe_key, event_id, first_seen)
		VALUES (1, 'old', 'evt_old', now() - interval '3 days'), (1, 'recent', 'evt_recent', now() - interval '30 hours')`); err != nil {
		t.Fatal(err)
	}
	if status, _, b := e.track(t, validEvent); status != 200 {
		t.Fatalf("%d %s", status, b)
	}
	deadline := time.Now().Add(5 * time.Second)
	for e.count(t, `SELECT count(*) FROM tracked_event_dedupe WHERE dedupe_key = 'old'`) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("stale claim not pruned")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := e.count(t, `SELECT count(*) FROM tracked_event_dedupe WHERE dedupe_key = 'recent'`); n != 1 {
		t.Errorf("a claim younger than 48 h was pruned")
	}
}

// TestTrickyBodiesNeverFail stores odd but valid events through the real
// server and database: each is answered 200 or 400, never 5xx.
func TestTrickyBodiesNeverFail(t *testing.T) {
	e := newEnv(t, nil)
	base := `"name":"x","identity":{"type":"address","id":"a"},"timestamp":1763726400000`
	for i, attrs := range []string{
		`{"n":1e300,"m":-1e-300,"z":-0,"big":123456789012345678901234567890123456789}`,
		`{"s":"\ud800 lone surrogate","e":"😀","k\\ey":"\"quoted\"","html":"<script>&"}`,
		`{"deep":` + strings.Repeat(`{"a":`, 30) + `1` + strings.Repeat(`}`, 30) + `}`,
		`{"arr":[` + strings.TrimSuffix(strings.Repeat(`1.5,`, 3000), ",") + `]}`,
		`{"":"empty key","tokens":[{"amount":0,"denom":"ibc/27394FB092D2ECCD56123C74F36E4C1F926001CEADA9CA97EA622B25F41E5EB2"}]}`,
	} {
		body := fmt.Sprintf(`{%s,"attributes":%s,"meta":{"messageId":"tricky-%d"}}`, base, attrs, i)
		status, _, b := e.track(t, body)
		if status != 200 {
			t.Errorf("case %d: %d %s", i, status, b)
		}
	}
	resp, b := e.do(t, "POST", "/track", strings.NewReader("\xff\xfe{"), map[string]string{"Authorization": "Bearer " + e.sk, "Content-Type": "application/json"})
	if resp.StatusCode != 400 {
		t.Errorf("binary body: %d %s", resp.StatusCode, b)
	}
}

// TestClickIDFromTheLandingPage: an SDK event without meta.click_id takes
// the click id from the landing page's URL, its query string, or the
// referrer, in that order, and it is stored with the event.
func TestClickIDFromTheLandingPage(t *testing.T) {
	for _, c := range []struct {
		name, meta, want string
	}{
		{"meta.click_id first", `{"click_id":"clk_meta","page":{"url":"https://a.example/?click_id=clk_url"}}`, "clk_meta"},
		{"page url", `{"page":{"url":"https://a.example/land?utm_source=x&click_id=clk_url#top","search":"?click_id=clk_search"}}`, "clk_url"},
		{"page search", `{"page":{"url":"https://a.example/land","search":"?utm_campaign=c&click_id=clk_search"}}`, "clk_search"},
		{"referrer after a redirect", `{"page":{"url":"https://a.example/app","referrer":"https://a.example/land?click_id=clk_ref"}}`, "clk_ref"},
		{"none", `{"page":{"url":"https://a.example/?x=1","search":"","referrer":""}}`, ""},
		{"an empty one passed over", `{"page":{"url":"https://a.example/?click_id=","search":"click_id=clk_search"}}`, "clk_search"},
		{"not a click id (too long)", `{"page":{"url":"https://a.example/?click_id=` + strings.Repeat("x", 300) + `"}}`, ""},
		{"page not an object", `{"page":"https://a.example/?click_id=clk"}`, ""},
	} {
		body := `{"name":"page","anonymousId":"anon-1","timestamp":1763726400000,"meta":` + c.meta + `}`
		ev, err := engagement.DecodeSDK([]byte(body), now)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got := ""
		if ev.ClickID != nil {
			got = *ev.ClickID
		}
		if got != c.want {
			t.Errorf("%s: click id %q, want %q", c.name, got, c.want)
		}
	}

	e := newEnv(t, nil)
	body := `{"name":"page","anonymousId":"anon-2","timestamp":1763726400000,"meta":{"page":{"url":"https://site.example/?click_id=clk_42"}}}`
	resp, b := e.do(t, "POST", "/sdk/track", strings.NewReader(body),
		map[string]string{"Authorization": "Bearer " + e.pk, "Content-Type": "text/plain;charset=UTF-8", "Origin": "https://site.example"})
	var a trackAnswer
	_ = json.Unmarshal(b, &a)
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	var click string
	if err := e.db.NewRaw(`SELECT click_id FROM tracked_events WHERE id = ?`, a.ID).Scan(context.Background(), &click); err != nil || click != "clk_42" {
		t.Errorf("stored click id %q (%v), want clk_42", click, err)
	}
}
