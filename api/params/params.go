// Package params parses and validates request parameters against the route
// table: every operation's path and query parameters are checked for type,
// value set, bounds and presence before its handler runs, and handlers read
// typed values.
package params

import (
	"github.com/chainlens/chainlens/chains/cosmos"

	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/chainlens/chainlens/api/problem"
	"github.com/chainlens/chainlens/api/route"
)

// MaxValueLen bounds the length of one parameter value.
const MaxValueLen = 2048

// MaxHourlyRange is the longest date range served with hourly buckets.
const MaxHourlyRange = 92 * 24 * time.Hour

// DefaultRange is the span of a date range when start_date is absent.
const DefaultRange = 30 * 24 * time.Hour

// Values are the parsed parameters of one request.
type Values struct {
	raw      map[string][]string // present values, after defaults, trimmed
	ints     map[string]int64
	floats   map[string]float64
	times    map[string]time.Time
	dateOnly map[string]bool
	given    map[string]bool // sent by the client (not defaulted)
	// op and declared are the operation the values were parsed for and
	// its parameters' types: asking for a name the route table does not
	// declare for it (a typo) panics, rather than reading a zero value.
	op       string
	declared map[string]route.ParamType
}

// must panics when name is not a parameter of the operation (of one of
// types, when given): a handler's mistake, which tests reach.
func (v Values) must(name string, types ...route.ParamType) {
	if v.declared == nil {
		return
	}
	typ, ok := v.declared[name]
	if !ok {
		panic(fmt.Sprintf("params: %s has no parameter %q in the route table", v.op, name))
	}
	if len(types) > 0 && !slices.Contains(types, typ) {
		panic(fmt.Sprintf("params: parameter %q of %s is %s, read as %v", name, v.op, typ, types))
	}
}

// Parse validates the parameters of r against op and returns them typed.
// Unknown query parameters are ignored. All problems are reported at once
// as a 400 with invalid_params.
func Parse(op route.Operation, r *http.Request) (Values, error) {
	v := Values{
		raw: map[string][]string{}, ints: map[string]int64{}, floats: map[string]float64{},
		times: map[string]time.Time{}, dateOnly: map[string]bool{}, given: map[string]bool{},
		op: op.ID().String(), declared: map[string]route.ParamType{},
	}
	for _, p := range op.Params {
		v.declared[p.Name] = p.Type
	}
	query := r.URL.Query()
	var bad []problem.InvalidParam
	for _, p := range op.Params {
		var vals []string
		if p.In == route.InPath {
			if s := r.PathValue(p.Name); s != "" {
				vals = []string{s}
			}
		} else {
			vals = queryValues(query[p.Name], p.Multi)
			if len(vals) == 0 && len(query[p.Name]) > 0 && !p.Multi {
				// Sent without a value (?limit=): a value that does not
				// parse, not an absent parameter taking its default.
				bad = append(bad, problem.InvalidParam{Name: p.Name, Reason: "must not be empty"})
				continue
			}
		}
		if len(vals) == 0 {
			if p.Required {
				bad = append(bad, problem.InvalidParam{Name: p.Name, Reason: "is required"})
				continue
			}
			if p.Default == "" {
				continue
			}
			vals = queryValues([]string{p.Default}, p.Multi)
		} else {
			v.given[p.Name] = true
		}
		if reason := v.check(p, vals); reason != "" {
			bad = append(bad, problem.InvalidParam{Name: p.Name, Reason: reason})
			continue
		}
		v.raw[p.Name] = vals
	}
	if len(bad) > 0 {
		return Values{}, problem.BadParams(bad)
	}
	return v, nil
}

// queryValues trims values; a multi-value parameter is also split on commas
// and deduplicated, keeping first-seen order.
func queryValues(in []string, multi bool) []string {
	var out []string
	for _, s := range in {
		parts := []string{s}
		if multi {
			parts = strings.Split(s, ",")
		}
		for _, p := range parts {
			p = strings.TrimSpace(p)
			if p == "" || (multi && slices.Contains(out, p)) {
				continue
			}
			out = append(out, p)
			if !multi {
				return out // a repeated single-value parameter: the first wins
			}
		}
	}
	return out
}

func (v *Values) check(p route.Param, vals []string) string {
	if p.MaxItems > 0 && len(vals) > p.MaxItems {
		return fmt.Sprintf("takes at most %d values", p.MaxItems)
	}
	for _, s := range vals {
		if len(s) > MaxValueLen {
			return fmt.Sprintf("is longer than %d characters", MaxValueLen)
		}
		if strings.ContainsRune(s, 0) {
			return "contains a NUL character"
		}
		if len(p.Enum) > 0 && !slices.Contains(p.Enum, s) {
			return "must be one of " + strings.Join(p.Enum, ", ")
		}
	}
	if p.Multi {
		return ""
	}
	s := vals[0]
	switch p.Type {
	case route.Integer:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return "must be an integer"
		}
		if reason := bounds(p, float64(n)); reason != "" {
			return reason
		}
		v.ints[p.Name] = n
	case route.Number:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return "must be a number"
		}
		if reason := bounds(p, f); reason != "" {
			return reason
		}
		v.floats[p.Name] = f
	case route.Boolean:
		if s != "true" && s != "false" {
			return "must be true or false"
		}
	case route.Denom:
		if cosmos.ValidDenom(s) != nil {
			return "must be a denom: a letter, then 2 to 127 letters, digits or / : . _ -"
		}
	case route.Bech32:
		lower, err := cosmos.NormalBech32(s)
		if err != nil {
			return "must be a bech32 address"
		}
		vals[0] = lower // kept by Parse
	case route.Date:
		t, dateOnly, err := ParseDate(s)
		if err != nil {
			return "must be a date: YYYY-MM-DD HH:MM:SS, YYYY-MM-DD or RFC 3339"
		}
		v.times[p.Name], v.dateOnly[p.Name] = t, dateOnly
	}
	return ""
}

func bounds(p route.Param, f float64) string {
	switch {
	case p.Min != nil && p.Max != nil && (f < *p.Min || f > *p.Max):
		return fmt.Sprintf("must be between %s and %s", fmtNum(*p.Min), fmtNum(*p.Max))
	case p.Min != nil && f < *p.Min:
		return "must be at least " + fmtNum(*p.Min)
	case p.Max != nil && f > *p.Max:
		return "must be at most " + fmtNum(*p.Max)
	}
	return ""
}

func fmtNum(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// ParseDate accepts YYYY-MM-DD HH:MM:SS, YYYY-MM-DD and RFC 3339; times are UTC.
// dateOnly reports the YYYY-MM-DD form.
func ParseDate(s string) (t time.Time, dateOnly bool, err error) {
	if t, err := time.Parse(time.DateTime, s); err == nil {
		return t.UTC(), false, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t.UTC(), true, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), false, nil
	}
	return time.Time{}, false, fmt.Errorf("bad date %q", s)
}

// Has reports whether the parameter has a value, sent or defaulted.
func (v Values) Has(name string) bool {
	v.must(name)
	return len(v.raw[name]) > 0
}

// Given reports whether the client sent the parameter.
func (v Values) Given(name string) bool {
	v.must(name)
	return v.given[name]
}

// String returns the first value of the parameter, or "".
func (v Values) String(name string) string {
	v.must(name)
	if vs := v.raw[name]; len(vs) > 0 {
		return vs[0]
	}
	return ""
}

// Optional is String for code shared by operations of which only some
// take the parameter: "" when this one does not (no typo check).
func (v Values) Optional(name string) string {
	if _, ok := v.declared[name]; !ok && v.declared != nil {
		return ""
	}
	return v.String(name)
}

// Strings returns every value of a multi-value parameter.
func (v Values) Strings(name string) []string {
	v.must(name)
	return slices.Clone(v.raw[name])
}

// Int returns an integer parameter (0 when absent).
func (v Values) Int(name string) int64 {
	v.must(name, route.Integer)
	return v.ints[name]
}

// Float returns a number parameter (0 when absent); not for token amounts.
func (v Values) Float(name string) float64 {
	v.must(name, route.Number, route.Integer)
	return v.floats[name]
}

// Bool returns a boolean parameter (false when absent).
func (v Values) Bool(name string) bool {
	v.must(name, route.Boolean)
	return v.String(name) == "true"
}

// Time returns a date parameter and whether it is present.
func (v Values) Time(name string) (time.Time, bool) {
	v.must(name, route.Date)
	t, ok := v.times[name]
	return t, ok
}

// Range is a closed time interval [Start, End].
type Range struct{ Start, End time.Time }

// DateRange resolves start_date/end_date by the common rules: a date-only
// end means the end of that day, end defaults to now and start to end minus
// 30 days; start after end is a 400; with hourly buckets the range is
// limited to 92 days. A range that starts after now is a 400 naming the
// parameter that put it there: it can hold no data yet, and the 503 of a
// range the indexer has not reached would have clients retry it for as long
// as the range is in the future.
func (v Values) DateRange(now time.Time, hourly bool) (Range, error) {
	end, ok := v.Time("end_date")
	switch {
	case !ok:
		end = now.UTC()
	case v.dateOnly["end_date"]:
		end = end.Add(24*time.Hour - time.Nanosecond)
	}
	start, ok := v.Time("start_date")
	late := "start_date"
	if !ok {
		start, late = end.Add(-DefaultRange), "end_date"
	}
	if start.After(now) {
		return Range{}, problem.BadParam(late, "puts the range's start after the present ("+now.UTC().Format(time.RFC3339)+")")
	}
	if start.After(end) {
		return Range{}, problem.BadParam("start_date", "must not be after end_date")
	}
	if hourly && end.Sub(start) > MaxHourlyRange {
		return Range{}, problem.BadParam("start_date", "with hourly buckets the range is limited to 92 days")
	}
	return Range{Start: start, End: end}, nil
}
