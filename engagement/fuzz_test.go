package engagement_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chainlens/chainlens/engagement"
)

// FuzzTrackBody feeds arbitrary bodies to both event decoders: each either
// fails with a *FieldError (answered 400) or yields an event that Postgres
// can store (valid JSON objects without NUL, a timestamp within bounds, a
// dedupe key) — never another error, which would be a 5xx, and never a panic.
func FuzzTrackBody(f *testing.F) {
	for _, s := range []string{
		validEvent,
		`{"name":"page","timestamp":1763726400000,"anonymousId":"a","userId":"osmo1x","meta":{"messageId":"m"}}`,
		`{"name":"x","identity":{"type":"address","id":"a"},"timestamp":"2026-11-21T10:00:00Z","attributes":{"tokens":[{"amount":1,"denom":"u"}]}}`,
		`{"name":"x","identity":{"type":"address","id":"a"},"timestamp":1e300}`,
		`{"name":"\u0000","identity":{"type":"address","id":"\ud800"},"timestamp":-1}`,
		`{"name":"x","identity":{"type":"address","id":"a"},"timestamp":1,"attributes":{"f":1e-20000,"g":0.00000000000000000000000000000000000000001}}`,
		`[]`, `null`, `{}`, `{"a":[[[[[[]]]]]]}`, "\xff\xfe",
	} {
		f.Add([]byte(s))
	}
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, decode := range []func([]byte, time.Time) (*engagement.Event, error){engagement.DecodeTrack, engagement.DecodeSDK} {
			ev, err := decode(body, now)
			if err != nil {
				var fe *engagement.FieldError
				if !errors.As(err, &fe) || fe.Field == "" {
					t.Fatalf("%q: error %v is not a field error (would be a 5xx)", body, err)
				}
				continue
			}
			for _, raw := range []json.RawMessage{ev.Attributes, ev.Meta} {
				if !json.Valid(raw) || raw[0] != '{' || bytes.Contains(raw, []byte(`\u0000`)) {
					t.Fatalf("%q: unstorable JSON %s", body, raw)
				}
			}
			assertStorableNumbers(t, body, ev.Attributes)
			assertStorableNumbers(t, body, ev.Meta)
			if ev.Name == "" || ev.IdentityID == "" || ev.DedupeKey == "" || ev.Timestamp.After(now.Add(24*time.Hour)) || ev.Timestamp.Year() > 9999 {
				t.Fatalf("%q: bad event %+v", body, ev)
			}
		}
	})
}

// assertStorableNumbers fails when raw holds a number Postgres numeric
// could reject (too long, or an exponent beyond ±300).
func assertStorableNumbers(t *testing.T, body []byte, raw json.RawMessage) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err != nil {
			return
		}
		if n, ok := tok.(json.Number); ok {
			lit := strings.ToLower(string(n))
			if len(lit) > 40 {
				t.Fatalf("%q: stored number %s is too long", body, lit)
			}
			if i := strings.IndexByte(lit, 'e'); i >= 0 {
				if exp, err := strconv.Atoi(strings.TrimPrefix(lit[i+1:], "+")); err != nil || exp > 300 || exp < -300 {
					t.Fatalf("%q: stored number %s has a wild exponent", body, lit)
				}
			}
		}
	}
}
