package store

// AnnouncedSince reports whether chain itself was announced after seq (a
// "*" does not count), for tests that wait for one announcement.
func (c *Changes) AnnouncedSince(seq int64, chain string) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.chain[chain] > seq
}

// SplitHosts is splitHosts, for tests.
var SplitHosts = splitHosts
