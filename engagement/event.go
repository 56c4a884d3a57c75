package engagement

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Limits of tracked events.
const (
	MaxNameLen     = 200
	MaxIDLen       = 256
	MaxFutureSkew  = 24 * time.Hour
	maxJSONDepth   = 32
	maxTimestampMS = 253402300799999 // 9999-12-31T23:59:59.999Z
)

// Event sources.
const (
	SourceTrack = "track"
	SourceSDK   = "sdk"
)

// FieldError is a tracked event that failed validation: the field (a dotted
// path such as identity.id or attributes.tokens[0].amount) and why.
type FieldError struct {
	Field  string
	Reason string
}

func (e *FieldError) Error() string { return e.Field + " " + e.Reason }

func bad(field, format string, args ...any) *FieldError {
	return &FieldError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// Event is a validated tracked event, ready to be stored.
type Event struct {
	ID                string
	KeyID             int64 // 0 when no API key
	Source            string
	Name              string
	IdentityType      string // address, or anonymous for SDK events without userId
	IdentityID        string
	IdentityCanonical *string
	IdentityNorm      string
	AnonymousID       *string
	ClickID           *string
	// UTM are the event's utm values (UTMOf), Campaign "" when none.
	UTM        UTM
	Attributes json.RawMessage // canonical JSON object
	Meta       json.RawMessage // canonical JSON object
	Timestamp  time.Time
	ReceivedAt time.Time
	DedupeKey  string
	// MissingRecommended lists the recommended attributes of a standard
	// event that the event lacks (never a reason to reject it).
	MissingRecommended []string
	// Warnings name the reserved members whose value was not of their
	// type: the event is stored as sent, the value is ignored (for
	// valuation, deduplication, attribution) and the answer lists them.
	Warnings []string
}

// recommended lists the recommended attributes of the standard events.
var recommended = map[string][]string{
	"open_position": {"tokens", "amount_usd"},
	"claim_rewards": {"tokens", "amount_usd"},
}

// decodeObject parses body as one JSON object with numbers kept exact.
func decodeObject(body []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, bad("body", "is not valid JSON: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, bad("body", "has data after the JSON object")
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, bad("body", "must be a JSON object")
	}
	return m, nil
}

// checkValue rejects what Postgres jsonb cannot store or what is absurd:
// NUL characters, numbers outside float64, nesting deeper than maxJSONDepth.
func checkValue(field string, v any, depth int) error {
	if depth > maxJSONDepth {
		return bad(field, "is nested deeper than %d levels", maxJSONDepth)
	}
	switch x := v.(type) {
	case string:
		if strings.ContainsRune(x, 0) {
			return bad(field, "must not contain NUL characters")
		}
	case json.Number:
		if !storableNumber(x) {
			return bad(field, "is a number out of range or with too many digits")
		}
	case []any:
		for i, e := range x {
			if err := checkValue(fmt.Sprintf("%s[%d]", field, i), e, depth+1); err != nil {
				return err
			}
		}
	case map[string]any:
		for k, e := range x {
			if strings.ContainsRune(k, 0) {
				return bad(field, "has a key with a NUL character")
			}
			if err := checkValue(field+"."+k, e, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// storableNumber reports whether a JSON number fits float64 and Postgres
// numeric (at most 40 characters, decimal exponent within ±300).
func storableNumber(n json.Number) bool {
	lit := string(n)
	if len(lit) > 40 {
		return false
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return false
	}
	if i := strings.IndexAny(lit, "eE"); i >= 0 {
		exp, err := strconv.Atoi(strings.TrimPrefix(lit[i+1:], "+"))
		if err != nil || exp > 300 || exp < -300 {
			return false
		}
	}
	return true
}

// optObject returns the object member name of m ({} when absent or null).
func optObject(m map[string]any, name string) (map[string]any, error) {
	v, ok := m[name]
	if !ok || v == nil {
		return map[string]any{}, nil
	}
	o, ok := v.(map[string]any)
	if !ok {
		return nil, bad(name, "must be an object")
	}
	if err := checkValue(name, o, 1); err != nil {
		return nil, err
	}
	return o, nil
}

// reqString returns a required non-empty string member of at most max characters.
func reqString(m map[string]any, field, name string, max int) (string, error) {
	v, ok := m[name]
	if !ok || v == nil {
		return "", bad(field, "is required")
	}
	s, ok := v.(string)
	if !ok {
		return "", bad(field, "must be a string")
	}
	return s, checkString(field, s, max)
}

func checkString(field, s string, max int) error {
	if strings.TrimSpace(s) == "" {
		return bad(field, "must not be empty")
	}
	if utf8.RuneCountInString(s) > max {
		return bad(field, "must be at most %d characters", max)
	}
	if strings.ContainsRune(s, 0) {
		return bad(field, "must not contain NUL characters")
	}
	return nil
}

// isoLayouts are the ISO-8601 forms a timestamp string may take: RFC
// 3339, basic-format and hour-only offsets (+0100, +01), minutes without
// seconds, no zone (UTC), a space for the T, a date alone.
var isoLayouts = []string{
	time.RFC3339Nano, "2006-01-02T15:04:05.999999999Z0700", "2006-01-02T15:04:05.999999999Z07",
	"2006-01-02T15:04Z07:00", "2006-01-02T15:04Z0700", "2006-01-02T15:04Z07",
	"2006-01-02T15:04:05.999999999", "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02",
}

// ParseTimestamp reads an event timestamp: a number of milliseconds (or of
// seconds when below 10^11), or an ISO-8601 / RFC 3339 string (UTC when it
// has no zone). A time more than 24 h after now is refused.
func ParseTimestamp(v any, now time.Time, numberOnly bool) (time.Time, error) {
	var t time.Time
	switch x := v.(type) {
	case nil:
		return t, bad("timestamp", "is required")
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
			return t, bad("timestamp", "must be a non-negative number of milliseconds")
		}
		if f < 1e11 {
			f *= 1000
		}
		if f > maxTimestampMS {
			return t, bad("timestamp", "is too far in the future")
		}
		t = time.UnixMilli(int64(f)).UTC()
	case string:
		if numberOnly {
			return t, bad("timestamp", "must be a number of milliseconds since the epoch")
		}
		var err error
		for _, layout := range isoLayouts {
			if t, err = time.Parse(layout, strings.TrimSpace(x)); err == nil {
				break
			}
		}
		if err != nil {
			return t, bad("timestamp", "must be an ISO-8601 time such as 2026-01-02T15:04:05Z, or a number of milliseconds")
		}
		t = t.UTC()
		if t.Before(time.Unix(0, 0)) {
			return t, bad("timestamp", "must not be before 1970")
		}
	default:
		if numberOnly {
			return t, bad("timestamp", "must be a number of milliseconds since the epoch")
		}
		return t, bad("timestamp", "must be a number (ms or s) or an ISO-8601 string")
	}
	if t.After(now.Add(MaxFutureSkew)) {
		return t, bad("timestamp", "is more than 24 h in the future")
	}
	return t, nil
}

// checkStandard validates the shapes of the standard attributes tokens and
// amount_usd wherever they appear, and lists the recommended attributes a
// standard event lacks.
func checkStandard(name string, attrs map[string]any) (missing, warnings []string) {
	const ignored = "; stored as sent, not used for valuation"
	if v, ok := attrs["tokens"]; ok {
		if w := tokensProblem(v); w != "" {
			warnings = append(warnings, w+ignored)
		}
	}
	if v, ok := attrs["amount_usd"]; ok {
		if _, ok := v.(json.Number); !ok {
			warnings = append(warnings, "attributes.amount_usd must be a number"+ignored)
		}
	}
	for _, a := range recommended[name] {
		if _, ok := attrs[a]; !ok {
			missing = append(missing, a)
		}
	}
	return missing, warnings
}

// tokensProblem says what is wrong with a tokens attribute ("" if nothing).
func tokensProblem(v any) string {
	arr, ok := v.([]any)
	if !ok {
		return "attributes.tokens must be an array of {amount: number, denom: string}"
	}
	for i, it := range arr {
		f := fmt.Sprintf("attributes.tokens[%d]", i)
		o, ok := it.(map[string]any)
		if !ok {
			return f + " must be an object {amount: number, denom: string}"
		}
		if _, ok := o["amount"].(json.Number); !ok {
			return f + ".amount must be a number"
		}
		if d, ok := o["denom"].(string); !ok || strings.TrimSpace(d) == "" {
			return f + ".denom must be a non-empty string"
		}
	}
	return ""
}

// metaString reads an optional string member of meta used by the service
// (messageId, click_id): a value of another type, empty, too long or with
// NUL characters is ignored with a warning, never a refusal.
func metaString(ev *Event, meta map[string]any, name string) string {
	v, ok := meta[name]
	if !ok || v == nil {
		return ""
	}
	s, ok := v.(string)
	if !ok {
		ev.Warnings = append(ev.Warnings, "meta."+name+" must be a string; ignored")
		return ""
	}
	if s == "" {
		return ""
	}
	if err := checkString("meta."+name, s, MaxIDLen); err != nil {
		ev.Warnings = append(ev.Warnings, err.Error()+"; ignored")
		return ""
	}
	return s
}

// DecodeTrack validates the body of POST /track received at now.
func DecodeTrack(body []byte, now time.Time) (*Event, error) {
	m, err := decodeObject(body)
	if err != nil {
		return nil, err
	}
	ev := &Event{Source: SourceTrack, ReceivedAt: now}
	if ev.Name, err = reqString(m, "name", "name", MaxNameLen); err != nil {
		return nil, err
	}
	idv, ok := m["identity"]
	if !ok || idv == nil {
		return nil, bad("identity", "is required")
	}
	identity, ok := idv.(map[string]any)
	if !ok {
		return nil, bad("identity", "must be an object {type, id}")
	}
	if ev.IdentityType, err = reqString(identity, "identity.type", "type", 64); err != nil {
		return nil, err
	}
	if ev.IdentityType != "address" {
		return nil, bad("identity.type", "must be address")
	}
	if ev.IdentityID, err = reqString(identity, "identity.id", "id", MaxIDLen); err != nil {
		return nil, err
	}
	if c, ok := identity["canonical"]; ok && c != nil {
		s, ok := c.(string)
		if !ok {
			return nil, bad("identity.canonical", "must be a string")
		}
		if err := checkString("identity.canonical", s, MaxIDLen); err != nil {
			return nil, err
		}
		ev.IdentityCanonical = &s
	}
	ev.IdentityNorm = normalizeLoose(ev.IdentityID)
	return finish(ev, m, now, false)
}

// DecodeSDK validates the body of POST /sdk/track received at now.
func DecodeSDK(body []byte, now time.Time) (*Event, error) {
	m, err := decodeObject(body)
	if err != nil {
		return nil, err
	}
	ev := &Event{Source: SourceSDK, ReceivedAt: now}
	if ev.Name, err = reqString(m, "name", "name", MaxNameLen); err != nil {
		return nil, err
	}
	anon, err := reqString(m, "anonymousId", "anonymousId", MaxIDLen)
	if err != nil {
		return nil, err
	}
	ev.AnonymousID = &anon
	ev.IdentityType, ev.IdentityID = "anonymous", anon
	if u, ok := m["userId"]; ok && u != nil {
		s, ok := u.(string)
		if !ok {
			return nil, bad("userId", "must be a string")
		}
		if s != "" {
			if err := checkString("userId", s, MaxIDLen); err != nil {
				return nil, err
			}
			ev.IdentityType, ev.IdentityID = "address", s
			ev.IdentityNorm = normalizeLoose(s)
		}
	}
	return finish(ev, m, now, true)
}

// finish reads the members shared by both bodies (attributes, meta,
// timestamp) and derives the deduplication key.
func finish(ev *Event, m map[string]any, now time.Time, numberOnly bool) (*Event, error) {
	attrs, err := optObject(m, "attributes")
	if err != nil {
		return nil, err
	}
	meta, err := optObject(m, "meta")
	if err != nil {
		return nil, err
	}
	ev.MissingRecommended, ev.Warnings = checkStandard(ev.Name, attrs)
	if ev.Timestamp, err = ParseTimestamp(m["timestamp"], now, numberOnly); err != nil {
		return nil, err
	}
	messageID := metaString(ev, meta, "messageId")
	if id := ClickIDOf(meta, metaString(ev, meta, "click_id")); id != "" {
		ev.ClickID = &id
	}
	ev.UTM = UTMOf(meta)
	if ev.Attributes, err = json.Marshal(attrs); err != nil {
		return nil, fmt.Errorf("encode attributes: %w", err)
	}
	if ev.Meta, err = json.Marshal(meta); err != nil {
		return nil, fmt.Errorf("encode meta: %w", err)
	}
	if messageID != "" {
		ev.DedupeKey = "m:" + messageID
	} else {
		// Marshal sorts object keys, so equal attributes hash equally.
		h := sha256.New()
		for _, part := range []string{ev.Source, ev.Name, ev.IdentityType, ev.IdentityID, strconv.FormatInt(ev.Timestamp.UnixMilli(), 10)} {
			h.Write([]byte(part))
			h.Write([]byte{0})
		}
		h.Write(ev.Attributes)
		ev.DedupeKey = "h:" + hex.EncodeToString(h.Sum(nil))
	}
	return ev, nil
}

// ClickIDOf is the click id of an event, found where browsers carry it:
// meta.click_id (given), else the click_id query parameter of the landing
// page's URL (meta.page.url), else of its query string (meta.page.search),
// else of the referrer (meta.page.referrer: the page that redirected to the
// landing page); "" when none has one. A value that cannot be a click id
// (too long, NUL) is passed over.
func ClickIDOf(meta map[string]any, given string) string {
	if given != "" {
		return given
	}
	page, _ := meta["page"].(map[string]any)
	for _, member := range []string{"url", "search", "referrer"} {
		raw, _ := page[member].(string)
		if raw == "" {
			continue
		}
		query := raw
		if member != "search" {
			u, err := url.Parse(raw)
			if err != nil {
				continue
			}
			query = u.RawQuery
		}
		values, err := url.ParseQuery(strings.TrimPrefix(query, "?"))
		if err != nil && len(values) == 0 {
			continue
		}
		if id := values.Get("click_id"); id != "" && checkString("click_id", id, MaxIDLen) == nil {
			return id
		}
	}
	return ""
}

// UTMOf is the utm values of an event: meta.campaign ({name, source,
// medium}, as Segment's context.campaign), else the utm_campaign,
// utm_source and utm_medium query parameters of the landing page
// (meta.page.url, else meta.page.search); Campaign "" when none. Values
// longer than MaxUTMLen or with NUL are passed over.
func UTMOf(meta map[string]any) UTM {
	ok := func(s string) bool {
		return s != "" && utf8.RuneCountInString(s) <= MaxUTMLen && !strings.ContainsRune(s, 0)
	}
	clean := func(s string) string {
		if ok(s) {
			return s
		}
		return ""
	}
	if c, _ := meta["campaign"].(map[string]any); c != nil {
		name, _ := c["name"].(string)
		source, _ := c["source"].(string)
		medium, _ := c["medium"].(string)
		if ok(name) {
			return UTM{Campaign: name, Source: clean(source), Medium: clean(medium)}
		}
	}
	page, _ := meta["page"].(map[string]any)
	for _, member := range []string{"url", "search"} {
		raw, _ := page[member].(string)
		query := raw
		if member == "url" {
			u, err := url.Parse(raw)
			if err != nil {
				continue
			}
			query = u.RawQuery
		}
		values, _ := url.ParseQuery(strings.TrimPrefix(query, "?"))
		if name := values.Get("utm_campaign"); ok(name) {
			return UTM{Campaign: name, Source: clean(values.Get("utm_source")), Medium: clean(values.Get("utm_medium"))}
		}
	}
	return UTM{}
}
