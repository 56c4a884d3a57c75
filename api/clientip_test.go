package api

import (
	"net/http/httptest"
	"net/netip"
	"testing"
)

func TestClientIP(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	cases := []struct {
		name    string
		trusted []netip.Prefix
		peer    string
		xff     []string
		want    string
	}{
		{"no proxies configured: the peer, whatever the header", nil, "10.0.0.5:1234", []string{"1.2.3.4"}, "10.0.0.5"},
		{"untrusted peer: its header is ignored", trusted, "203.0.113.9:1234", []string{"1.2.3.4"}, "203.0.113.9"},
		{"trusted peer: the client it names", trusted, "10.0.0.5:1234", []string{"1.2.3.4"}, "1.2.3.4"},
		{"two trusted hops: the rightmost untrusted entry", trusted, "10.0.0.5:1234", []string{"6.6.6.6, 1.2.3.4, 10.1.1.1"}, "1.2.3.4"},
		{"several headers join in order", trusted, "10.0.0.5:1234", []string{"6.6.6.6", "1.2.3.4"}, "1.2.3.4"},
		{"only trusted hops: the peer", trusted, "10.0.0.5:1234", []string{"10.2.2.2"}, "10.0.0.5"},
		{"malformed entry: the peer", trusted, "10.0.0.5:1234", []string{"1.2.3.4, bogus"}, "10.0.0.5"},
		{"no header: the peer", trusted, "10.0.0.5:1234", nil, "10.0.0.5"},
		{"IPv6 trusted peer", trusted, "[::1]:99", []string{"2001:db8::7"}, "2001:db8::7"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := &Server{trusted: c.trusted}
			r := httptest.NewRequest("GET", "/click", nil)
			r.RemoteAddr = c.peer
			for _, v := range c.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			if got := s.clientIP(r); got != c.want {
				t.Errorf("clientIP = %q, want %q", got, c.want)
			}
		})
	}
}
