package api

import (
	"bytes"
	"compress/gzip"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/chainlens/chainlens/api/respcache"
	"github.com/chainlens/chainlens/api/route"
)

// encode renders a handler's answer: JSON, freshness headers, an ETag and,
// when compress is set, for bodies of 1 KB or more, a gzip variant.
func encode(op route.Operation, resp *Response, compress bool) (*respcache.Entry, error) {
	var buf bytes.Buffer
	if raw, ok := resp.Body.(json.RawMessage); ok {
		// Already rendered by the handler (large answers written straight
		// from the rows): sent as is, ended like Encode ends a value.
		buf.Grow(len(raw) + 1)
		buf.Write(raw)
		buf.WriteByte('\n')
	} else {
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(resp.Body); err != nil {
			return nil, fmt.Errorf("encode %s: %w", op.ID(), err)
		}
	}
	e := &respcache.Entry{Body: buf.Bytes(), Header: http.Header{}}
	for _, ch := range resp.Freshness.Chains {
		e.Chains = append(e.Chains, ch.ChainID)
	}
	e.Header.Set("Content-Type", "application/json")
	if op.Analytics() {
		setFreshness(e.Header, resp.Freshness)
		maxAge := resp.MaxAge
		if maxAge == 0 {
			maxAge = DefaultMaxAge
		}
		e.Header.Set("Cache-Control", "private, max-age="+strconv.Itoa(int(maxAge/time.Second)))
	} else {
		e.Header.Set("Cache-Control", "no-store")
	}
	sum := fnv.New128a()
	_, _ = sum.Write(e.Body)
	e.ETag = `"` + hex.EncodeToString(sum.Sum(nil)) + `"`
	e.Header["Etag"] = []string{e.ETag}
	if compress && len(e.Body) >= 1024 {
		var gz bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&gz, gzip.BestSpeed)
		_, _ = zw.Write(e.Body)
		_ = zw.Close()
		e.Gzipped = gz.Bytes()
	}
	e.Length = []string{strconv.Itoa(len(e.Body))}
	e.GzippedLength = []string{strconv.Itoa(len(e.Gzipped))}
	return e, nil
}

// Header values shared by every answer; net/http only reads them.
var (
	varyEncoding = []string{"Accept-Encoding"}
	gzipEncoding = []string{"gzip"}
)

// writeEncoded sends an encoded answer, 304 when If-None-Match matches.
func writeEncoded(w http.ResponseWriter, r *http.Request, e *respcache.Entry) {
	h := w.Header()
	for k, v := range e.Header { // Content-Type, Cache-Control, ETag, freshness
		h[k] = v
	}
	if v := h["Vary"]; len(v) == 0 {
		h["Vary"] = varyEncoding
	} else {
		h["Vary"] = append(v[:len(v):len(v)], "Accept-Encoding") // after CORS's Origin
	}
	if match := r.Header.Get("If-None-Match"); match != "" && etagMatches(match, e.ETag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	body, length := e.Body, e.Length
	if e.Gzipped != nil && acceptsGzip(r) {
		h["Content-Encoding"] = gzipEncoding
		body, length = e.Gzipped, e.GzippedLength
	}
	if length == nil { // an entry built elsewhere (a test)
		length = []string{strconv.Itoa(len(body))}
	}
	h["Content-Length"] = length
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

func etagMatches(header, etag string) bool {
	for _, part := range strings.Split(header, ",") {
		part = strings.TrimPrefix(strings.TrimSpace(part), "W/")
		if part == etag || part == "*" {
			return true
		}
	}
	return false
}

func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		name, q, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.TrimSpace(name) == "gzip" && !strings.Contains(strings.ReplaceAll(q, " ", ""), "q=0") {
			return true
		}
	}
	return false
}

// setFreshness writes X-Data-Height and X-Data-Time: one chain's height, or
// chain=height pairs with the oldest block time when several chains are used.
func setFreshness(h http.Header, f Freshness) {
	switch len(f.Chains) {
	case 0:
		return
	case 1:
		h.Set("X-Data-Height", strconv.FormatInt(f.Chains[0].Height, 10))
		h.Set("X-Data-Time", f.Chains[0].Time.UTC().Format(time.RFC3339))
		return
	}
	parts := make([]string, len(f.Chains))
	oldest := f.Chains[0].Time
	for i, c := range f.Chains {
		parts[i] = c.ChainID + "=" + strconv.FormatInt(c.Height, 10)
		if c.Time.Before(oldest) {
			oldest = c.Time
		}
	}
	h.Set("X-Data-Height", strings.Join(parts, ","))
	h.Set("X-Data-Time", oldest.UTC().Format(time.RFC3339))
}

// WriteJSON sends v as a JSON answer with status: the admin API's and the
// console's answers (analytics answers go through encode).
func WriteJSON(w http.ResponseWriter, status int, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, err = w.Write(append(b, '\n'))
	return err
}
