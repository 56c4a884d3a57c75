// Package problem writes RFC 9457 application/problem+json answers and maps
// the service's sentinel errors to HTTP statuses in one table.
package problem

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// ContentType is the media type of every error answer.
const ContentType = "application/problem+json"

// InvalidParam names one parameter that failed to parse or validate.
type InvalidParam struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// Problem is an RFC 9457 problem document plus the `message` member that
// clients of the public API read.
type Problem struct {
	Type          string         `json:"type"`
	Title         string         `json:"title"`
	Status        int            `json:"status"`
	Detail        string         `json:"detail"`
	Instance      string         `json:"instance,omitempty"`
	Message       string         `json:"message"`
	RequestID     string         `json:"request_id,omitempty"`
	InvalidParams []InvalidParam `json:"invalid_params,omitempty"`
	// ConfigKey names the configuration key whose absence is the cause
	// (a /problems/not-configured answer).
	ConfigKey string `json:"config_key,omitempty"`
	// RetryAfter, when positive, is sent as the Retry-After header.
	RetryAfter time.Duration `json:"-"`
}

// Error is an error that carries its HTTP status and detail.
type Error struct {
	Status        int
	Detail        string
	InvalidParams []InvalidParam
	RetryAfter    time.Duration
	Err           error // wrapped cause, never shown to clients
	// Type and Title replace the status's default problem type (e.g. a 503
	// that is not about indexing).
	Type, Title string
	// ConfigKey is the configuration key a NotConfigured answer names.
	ConfigKey string
}

// NotConfiguredType is the problem type of an answer that needs
// configuration the operator has not given.
const NotConfiguredType = "/problems/not-configured"

// NotConfigured is the 503 of an answer that needs the configuration key
// key (config/<file>.yaml's path, e.g. perp.buystake_address), which is
// not set: indexing longer will not bring it, so it carries no Retry-After,
// and it is told apart from a range not indexed yet by its type.
func NotConfigured(key, detail string) *Error {
	return &Error{Status: http.StatusServiceUnavailable, Detail: detail + " (configuration key " + key + ")", ConfigKey: key,
		Type: NotConfiguredType, Title: "Not configured"}
}

// Unavailable is a 503 of a service that cannot take the request now
// (a full queue, a failed commit), to be retried after retryAfter.
func Unavailable(detail string, retryAfter time.Duration, cause error) *Error {
	return &Error{Status: http.StatusServiceUnavailable, Detail: detail, RetryAfter: retryAfter, Err: cause,
		Type: "/problems/unavailable", Title: "Temporarily unavailable"}
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%d %s: %v", e.Status, e.Detail, e.Err)
	}
	return fmt.Sprintf("%d %s", e.Status, e.Detail)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// BadParam is a 400 for one named parameter.
func BadParam(name, reason string) *Error {
	return &Error{Status: http.StatusBadRequest, Detail: name + " " + reason, InvalidParams: []InvalidParam{{Name: name, Reason: reason}}}
}

// BadParams is a 400 for several parameters at once.
func BadParams(ps []InvalidParam) *Error {
	detail := ""
	for i, p := range ps {
		if i > 0 {
			detail += "; "
		}
		detail += p.Name + " " + p.Reason
	}
	return &Error{Status: http.StatusBadRequest, Detail: detail, InvalidParams: ps}
}

// Status returns an error answered with the given status and detail.
func Status(status int, format string, args ...any) *Error {
	return &Error{Status: status, Detail: fmt.Sprintf(format, args...)}
}

// Sentinel errors that packages may return (wrapped) to get a status without
// importing net/http; ToStatus maps them.
var (
	ErrNotFound       = errors.New("not found")
	ErrNotIndexed     = errors.New("data not yet indexed")
	ErrNotImplemented = errors.New("not implemented")
)

// ToStatus maps an error to the HTTP status it is answered with.
func ToStatus(err error) int {
	var pe *Error
	switch {
	case err == nil:
		return http.StatusOK
	case errors.As(err, &pe):
		return pe.Status
	case errors.Is(err, ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, ErrNotIndexed):
		return http.StatusServiceUnavailable
	case errors.Is(err, ErrNotImplemented):
		return http.StatusNotImplemented
	default:
		return http.StatusInternalServerError
	}
}

// types gives each status its problem type and title.
var types = map[int]struct{ typ, title string }{
	http.StatusBadRequest:            {"/problems/invalid-parameter", "Invalid parameter"},
	http.StatusUnauthorized:          {"/problems/unauthorized", "Missing or invalid API key"},
	http.StatusForbidden:             {"/problems/forbidden", "Forbidden"},
	http.StatusNotFound:              {"/problems/not-found", "Not found"},
	http.StatusMethodNotAllowed:      {"/problems/method-not-allowed", "Method not allowed"},
	http.StatusRequestEntityTooLarge: {"/problems/body-too-large", "Body too large"},
	http.StatusUnsupportedMediaType:  {"/problems/unsupported-media-type", "Unsupported media type"},
	http.StatusTooManyRequests:       {"/problems/rate-limited", "Too many requests"},
	http.StatusInternalServerError:   {"/problems/internal", "Internal error"},
	http.StatusNotImplemented:        {"/problems/not-implemented", "Not implemented"},
	http.StatusServiceUnavailable:    {"/problems/not-indexed", "Data not available yet"},
}

// From builds the problem document for err answering a request to instance.
// Internal errors never leak their text.
func From(err error, instance string) *Problem {
	status := ToStatus(err)
	t, ok := types[status]
	if !ok {
		t.typ, t.title = "about:blank", http.StatusText(status)
	}
	p := &Problem{Type: t.typ, Title: t.title, Status: status, Instance: instance}
	var pe *Error
	switch {
	case errors.As(err, &pe):
		p.Detail, p.InvalidParams, p.RetryAfter, p.ConfigKey = pe.Detail, pe.InvalidParams, pe.RetryAfter, pe.ConfigKey
		if pe.Type != "" {
			p.Type, p.Title = pe.Type, pe.Title
		}
	case status == http.StatusInternalServerError:
		p.Detail = "internal error"
	default:
		p.Detail = err.Error()
	}
	if p.Detail == "" {
		p.Detail = t.title
	}
	p.Message = p.Detail
	return p
}

// Write sends p as the answer.
func Write(w http.ResponseWriter, p *Problem) {
	h := w.Header()
	h.Set("Content-Type", ContentType)
	h.Set("Cache-Control", "no-store")
	h.Del("ETag")
	h.Del("Content-Encoding")
	if p.RetryAfter > 0 {
		secs := int((p.RetryAfter + time.Second - 1) / time.Second)
		h.Set("Retry-After", strconv.Itoa(secs))
	}
	w.WriteHeader(p.Status)
	_ = json.NewEncoder(w).Encode(p)
}
