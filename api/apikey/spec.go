package apikey

import (
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/chainlens/chainlens/config"
)

// Request is what an operator asks for when creating a key (`keys
// create`, the console): zero numbers take the configured defaults.
type Request struct {
	Name        string        `json:"name"`
	Scopes      []string      `json:"scopes"`
	Origins     []string      `json:"origins"`
	Publishable bool          `json:"publishable"`
	Credits     int64         `json:"credits"`
	Period      time.Duration `json:"-"`
	PerSecond   float64       `json:"rate"`
	Burst       int           `json:"burst"`
}

// RequestError names the field of a Request that is refused (the CLI
// shows it as its flag).
type RequestError struct {
	Field string
	Msg   string
}

func (e *RequestError) Error() string { return e.Field + ": " + e.Msg }

func refuse(field, format string, args ...any) error {
	return &RequestError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// Scopes lists every scope a key may carry.
func Scopes() []string { return append([]string{ScopeAll, ScopeAdmin}, config.Groups...) }

// NewSpec validates a key request against the API's defaults: the one set
// of rules for every way a key is created.
func NewSpec(api config.API, r Request) (Spec, error) {
	s := Spec{Name: strings.TrimSpace(r.Name), Kind: Secret, QuotaCredits: api.Quota.Credits, QuotaPeriod: api.Quota.Period.D(),
		RatePerSec: api.RateLimit.PerSecond, RateBurst: api.RateLimit.Burst}
	if s.Name == "" {
		return s, refuse("name", "a key needs a name")
	}
	if _, err := strconv.ParseInt(s.Name, 10, 64); err == nil {
		return s, refuse("name", "%q: a name must not be a number (a key is revoked by id or name)", r.Name)
	}
	allowed := Scopes()
	for _, sc := range r.Scopes {
		sc = strings.TrimSpace(sc)
		if sc == "" {
			continue
		}
		if !slices.Contains(allowed, sc) {
			return s, refuse("scopes", "unknown scope %q (one of %s)", sc, strings.Join(allowed, ", "))
		}
		if !slices.Contains(s.Scopes, sc) {
			s.Scopes = append(s.Scopes, sc)
		}
	}
	if len(s.Scopes) == 0 {
		return s, refuse("scopes", "at least one scope is required")
	}
	for _, o := range r.Origins {
		if o = strings.TrimSpace(o); o != "" {
			origin, err := ParseOrigin(o)
			if err != nil {
				return s, refuse("origins", "%v", err)
			}
			s.Origins = append(s.Origins, origin)
		}
	}
	if r.Publishable {
		s.Kind = Publishable
		if len(s.Origins) == 0 {
			return s, refuse("origins", "a publishable key needs its allowed origins")
		}
	} else if len(s.Origins) > 0 {
		return s, refuse("origins", "only publishable keys carry origins")
	}
	if math.IsNaN(r.PerSecond) || math.IsInf(r.PerSecond, 0) {
		return s, refuse("rate", "must be a number of requests per second")
	}
	for field, negative := range map[string]bool{"credits": r.Credits < 0, "period": r.Period < 0, "rate": r.PerSecond < 0, "burst": r.Burst < 0} {
		if negative {
			return s, refuse(field, "must be positive")
		}
	}
	if r.Credits > 0 {
		s.QuotaCredits = r.Credits
	}
	if r.Period > 0 {
		if r.Period < time.Second {
			return s, refuse("period", "must be at least 1s")
		}
		s.QuotaPeriod = r.Period
	}
	if r.PerSecond > 0 {
		s.RatePerSec = r.PerSecond
	}
	if r.Burst > 0 {
		s.RateBurst = r.Burst
	}
	return s, nil
}

// ParseOrigin reads an allowed origin as a browser sends it in Origin:
// scheme://host[:port], lower case, without a path (or "*").
func ParseOrigin(o string) (string, error) {
	if o == "*" {
		return o, nil
	}
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		strings.Trim(u.Path, "/") != "" || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("%q is not an origin like https://site.example (scheme and host, no path)", o)
	}
	host := strings.ToLower(u.Host)
	// Browsers leave the default port out of Origin.
	if p := u.Port(); (u.Scheme == "https" && p == "443") || (u.Scheme == "http" && p == "80") {
		host = strings.ToLower(u.Hostname())
	}
	return u.Scheme + "://" + host, nil
}
