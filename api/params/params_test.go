package params

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/chainlens/chainlens/api/problem"
	"github.com/chainlens/chainlens/api/route"
	"github.com/cosmos/cosmos-sdk/types/bech32"
)

func testOp() route.Operation {
	lo, hi := route.Range(1, 1000)
	return route.Operation{Method: "GET", Path: "/pools/{pool_id}/x", Params: []route.Param{
		{Name: "pool_id", In: route.InPath, Type: route.String, Required: true},
		{Name: "limit", In: route.InQuery, Type: route.Integer, Default: "100", Min: lo, Max: hi},
		{Name: "order_by", In: route.InQuery, Type: route.String, Default: "desc", Enum: []string{"desc", "asc"}},
		{Name: "min_liquidity", In: route.InQuery, Type: route.Number, Default: "1"},
		{Name: "realtime", In: route.InQuery, Type: route.Boolean, Default: "false"},
		{Name: "start_date", In: route.InQuery, Type: route.Date},
		{Name: "end_date", In: route.InQuery, Type: route.Date},
		{Name: "pool_ids", In: route.InQuery, Type: route.String, Multi: true, MaxItems: 3},
		{Name: "percent", In: route.InQuery, Type: route.String, Required: true, Enum: []string{"10", "5", "2"}},
	}}
}

func parse(t *testing.T, target string) (Values, error) {
	t.Helper()
	op := testOp()
	mux := http.NewServeMux()
	var v Values
	var err error
	mux.HandleFunc(op.Pattern(), func(w http.ResponseWriter, r *http.Request) { v, err = Parse(op, r) })
	mux.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", target, nil))
	return v, err
}

func TestParseValid(t *testing.T) {
	v, err := parse(t, "/pools/ibc%2FABC/x?percent=2&limit=7&pool_ids=1,%202&pool_ids=2&pool_ids=3&realtime=true&start_date=2025-01-02&unknown=zzz")
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"path unescaped", v.String("pool_id"), "ibc/ABC"},
		{"limit", v.Int("limit"), int64(7)},
		{"default enum", v.String("order_by"), "desc"},
		{"default number", v.Float("min_liquidity"), 1.0},
		{"bool", v.Bool("realtime"), true},
		{"multi", v.Strings("pool_ids"), []string{"1", "2", "3"}},
		{"given", v.Given("limit"), true},
		{"defaulted not given", v.Given("order_by"), false},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %#v, want %#v", c.name, c.got, c.want)
		}
	}
	st, _ := v.Time("start_date")
	if !st.Equal(time.Date(2025, 1, 2, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("start_date = %v", st)
	}
}

func TestParseInvalid(t *testing.T) {
	cases := []struct {
		target string
		want   map[string]string // param -> reason substring
	}{
		{"/pools/1/x", map[string]string{"percent": "is required"}},
		{"/pools/1/x?percent=3", map[string]string{"percent": "must be one of 10, 5, 2"}},
		{"/pools/1/x?percent=2&limit=0", map[string]string{"limit": "between 1 and 1000"}},
		{"/pools/1/x?percent=2&limit=1001", map[string]string{"limit": "between 1 and 1000"}},
		{"/pools/1/x?percent=2&limit=ten", map[string]string{"limit": "must be an integer"}},
		{"/pools/1/x?percent=2&limit=1e3", map[string]string{"limit": "must be an integer"}},
		{"/pools/1/x?percent=2&min_liquidity=NaN", map[string]string{"min_liquidity": "must be a number"}},
		{"/pools/1/x?percent=2&realtime=yes", map[string]string{"realtime": "true or false"}},
		{"/pools/1/x?percent=2&limit=", map[string]string{"limit": "must not be empty"}},
		{"/pools/1/x?percent=%20&order_by=", map[string]string{"percent": "must not be empty", "order_by": "must not be empty"}},
		{"/pools/1/x?percent=2&start_date=2025-13-01", map[string]string{"start_date": "must be a date"}},
		{"/pools/1/x?percent=2&start_date='%20OR%201=1--", map[string]string{"start_date": "must be a date"}},
		{"/pools/1/x?percent=2&pool_ids=1,2,3,4", map[string]string{"pool_ids": "at most 3 values"}},
		{"/pools/1/x?percent=2&order_by=DESC", map[string]string{"order_by": "must be one of"}},
		{"/pools/1/x?limit=-1&order_by=up", map[string]string{"percent": "is required", "limit": "between", "order_by": "one of"}},
		{"/pools/1/x?percent=2&order_by=" + strings.Repeat("a", 3000), map[string]string{"order_by": "longer than"}},
	}
	for _, c := range cases {
		t.Run(c.target[:min(len(c.target), 60)], func(t *testing.T) {
			_, err := parse(t, c.target)
			var pe *problem.Error
			if !errors.As(err, &pe) || pe.Status != 400 {
				t.Fatalf("err = %v, want a 400", err)
			}
			if len(pe.InvalidParams) != len(c.want) {
				t.Fatalf("invalid params %+v, want %d", pe.InvalidParams, len(c.want))
			}
			for _, ip := range pe.InvalidParams {
				if !strings.Contains(ip.Reason, c.want[ip.Name]) || c.want[ip.Name] == "" {
					t.Errorf("%s: reason %q, want %q", ip.Name, ip.Reason, c.want[ip.Name])
				}
			}
		})
	}
}

func TestDateRange(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		query      string
		hourly     bool
		start, end time.Time
		wantErr    string
	}{
		{"", false, now.Add(-30 * 24 * time.Hour), now, ""},
		{"&end_date=2026-01-31", false, time.Date(2026, 1, 1, 23, 59, 59, 999999999, time.UTC), time.Date(2026, 1, 31, 23, 59, 59, 999999999, time.UTC), ""},
		{"&start_date=2026-01-01&end_date=2026-01-31%2010:00:00", false, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 1, 31, 10, 0, 0, 0, time.UTC), ""},
		{"&start_date=2026-01-01T00:00:00%2B02:00&end_date=2026-01-02", false, time.Date(2025, 12, 31, 22, 0, 0, 0, time.UTC), time.Date(2026, 1, 2, 23, 59, 59, 999999999, time.UTC), ""},
		{"&start_date=2026-02-01&end_date=2026-01-31", false, time.Time{}, time.Time{}, "must not be after end_date"},
		{"&start_date=2025-01-01&end_date=2026-01-31", true, time.Time{}, time.Time{}, "limited to 92 days"},
		{"&start_date=2025-01-01&end_date=2026-01-31", false, time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 1, 31, 23, 59, 59, 999999999, time.UTC), ""},
		// A range in the future can hold nothing yet: 400, not the 503 a
		// client would retry.
		{"&start_date=2026-11-21T12:00:01Z", false, time.Time{}, time.Time{}, "start_date puts the range's start after the present (2026-11-21T12:00:00Z)"},
		{"&start_date=2026-11-22&end_date=2026-11-23", false, time.Time{}, time.Time{}, "start_date puts the range's start after"},
		{"&end_date=9999-12-31", false, time.Time{}, time.Time{}, "end_date puts the range's start after"},
		{"&start_date=2026-11-21T12:00:00Z&end_date=2026-12-31", false, now, time.Date(2026, 12, 31, 23, 59, 59, 999999999, time.UTC), ""},
	}
	for _, c := range cases {
		v, err := parse(t, "/pools/1/x?percent=2"+c.query)
		if err != nil {
			t.Fatal(err)
		}
		r, err := v.DateRange(now, c.hourly)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%q: err %v, want %q", c.query, err, c.wantErr)
			}
			continue
		}
		if err != nil || !r.Start.Equal(c.start) || !r.End.Equal(c.end) {
			t.Errorf("%q: got %v..%v (%v), want %v..%v", c.query, r.Start, r.End, err, c.start, c.end)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"percent=2&limit=5", "limit=%00", "start_date=2025-01-01T00:00:00Z", "pool_ids=,,,", "limit=99999999999999999999"} {
		f.Add(s)
	}
	op := testOp()
	f.Fuzz(func(t *testing.T, q string) {
		r := httptest.NewRequest("GET", "/pools/1/x", nil)
		r.URL.RawQuery = q
		r.SetPathValue("pool_id", "1")
		v, err := Parse(op, r)
		if err != nil {
			if problem.ToStatus(err) != 400 {
				t.Fatalf("non-400 error %v", err)
			}
			return
		}
		if n := v.Int("limit"); n < 1 || n > 1000 {
			t.Fatalf("limit %d escaped its bounds", n)
		}
	})
}

func FuzzParseDate(f *testing.F) {
	for _, s := range []string{"2025-01-01", "2025-01-01 10:00:00", "2025-01-01T10:00:00.5+01:00", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tm, _, err := ParseDate(s)
		if err == nil && tm.Location() != time.UTC {
			t.Fatalf("%q parsed to non-UTC %v", s, tm)
		}
	})
}

// TestUndeclaredNamePanics: a handler asking for a parameter the route
// table does not declare for its operation (a typo), or reading one as
// another type, panics instead of reading a zero value; Optional is for
// code shared by operations of which only some take it.
func TestUndeclaredNamePanics(t *testing.T) {
	r := httptest.NewRequest("GET", "/pools/7/x?limit=5&percent=2", nil)
	r.SetPathValue("pool_id", "7")
	v, err := Parse(testOp(), r)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		read   func()
		panics bool
	}{
		{"declared", func() { _ = v.Int("limit") }, false},
		{"typo", func() { _ = v.Int("limt") }, true},
		{"read as another type", func() { _ = v.Int("pool_id") }, true},
		{"optional, absent from the operation", func() {
			if s := v.Optional("time_agg"); s != "" {
				panic("got " + s)
			}
		}, false},
		{"optional, declared", func() {
			if s := v.Optional("pool_id"); s != "7" {
				panic("got " + s)
			}
		}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			defer func() {
				if p := recover(); (p != nil) != c.panics {
					t.Fatalf("panic %v, want panic %v", p, c.panics)
				}
			}()
			c.read()
		})
	}
}

// TestDenomParameters: a denom parameter takes what the Cosmos SDK takes
// for a denom, and anything else is a 400 naming the parameter before a
// handler sees it.
func TestDenomParameters(t *testing.T) {
	op := route.Operation{Method: "GET", Path: "/dex/price/{denom0}", Params: []route.Param{
		{Name: "denom0", In: route.InPath, Type: route.Denom, Required: true}}}
	for _, c := range []struct {
		path string
		ok   bool
	}{
		{"untrn", true},
		{"ibc%2F27394FB092D2ECCD56123C74F36E4C1F926001CEADA9CA97EA622B25F41E5EB2", true},
		{"factory%2Fneutron1abc%2Fnewt", true},
		{"uatom", true},
		{"x", false},
		{"a%20b", false},
		{"%27%3B%20drop%20table%20blocks%3B%20--", false},
		{"..%2F..%2Fetc%2Fpasswd", false},
		{strings.Repeat("9", 400), false},
		{"9atom", false},
		{strings.Repeat("a", 129), false},
	} {
		t.Run(c.path, func(t *testing.T) {
			mux := http.NewServeMux()
			var err error
			mux.HandleFunc(op.Pattern(), func(w http.ResponseWriter, r *http.Request) { _, err = Parse(op, r) })
			mux.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/dex/price/"+c.path, nil))
			if c.ok {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var p *problem.Error
			if !errors.As(err, &p) || p.Status != http.StatusBadRequest || !strings.Contains(err.Error(), "denom0") {
				t.Fatalf("err = %v, want a 400 naming denom0", err)
			}
		})
	}
}

// TestBech32Parameters: an address parameter takes a bech32 string in
// lower case or, as BIP-173 allows, all upper case (lower-cased before a
// handler reads it); mixed case, a bad checksum or junk is a 400.
func TestBech32Parameters(t *testing.T) {
	addr, err := bech32.ConvertAndEncode("osmo", make([]byte, 20))
	if err != nil {
		t.Fatal(err)
	}
	op := route.Operation{Method: "GET", Path: "/portfolio", Params: []route.Param{
		{Name: "address", In: route.InQuery, Type: route.Bech32, Required: true}}}
	mixed := strings.ToUpper(addr[:6]) + addr[6:]
	badSum := addr[:len(addr)-1] + map[bool]string{true: "q", false: "p"}[addr[len(addr)-1] != 'q']
	for _, c := range []struct {
		value, want string // want "": a 400
	}{
		{addr, addr},
		{strings.ToUpper(addr), addr},
		{mixed, ""},
		{badSum, ""},
		{"osmo1", ""},
		{"%27%3B%20drop", ""},
	} {
		t.Run(c.value, func(t *testing.T) {
			mux := http.NewServeMux()
			var v Values
			var err error
			mux.HandleFunc(op.Pattern(), func(w http.ResponseWriter, r *http.Request) { v, err = Parse(op, r) })
			mux.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/portfolio?address="+c.value, nil))
			if c.want == "" {
				var p *problem.Error
				if !errors.As(err, &p) || p.Status != http.StatusBadRequest || !strings.Contains(err.Error(), "address") {
					t.Fatalf("err = %v, want a 400 naming address", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := v.String("address"); got != c.want {
				t.Fatalf("address %q, want %q", got, c.want)
			}
		})
	}
}
