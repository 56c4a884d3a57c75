package api

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// clientIP is the address of the client: the peer, or, when the peer is a
// trusted proxy (api.trusted_proxies), the rightmost X-Forwarded-For entry
// that is not a trusted proxy itself (entries left of it are client-set
// and cannot be trusted).
func (s *Server) clientIP(r *http.Request) string {
	peer, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		peer = r.RemoteAddr
	}
	if len(s.trusted) == 0 || !s.isTrusted(peer) {
		return peer
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		hop := strings.TrimSpace(hops[i])
		if _, err := netip.ParseAddr(hop); err != nil {
			return peer // a malformed chain: trust nothing in it
		}
		if !s.isTrusted(hop) {
			return hop
		}
	}
	return peer
}

func (s *Server) isTrusted(ip string) bool {
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return false
	}
	a = a.Unmap()
	for _, p := range s.trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
