package config

import (
	"fmt"
	"maps"
	"net"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// defaultPrefix is the account bech32 prefix of each known cosmos kind.
var defaultPrefix = map[string]string{
	"osmosis": "osmo", "dydx": "dydx", "neutron": "neutron", "cosmoshub": "cosmos", "xion": "xion", "noble": "noble",
}

// CronParser parses aggregator schedules: standard five fields, an optional
// leading seconds field, or descriptors such as @every 30s and @hourly.
var CronParser = cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

var evmAddress = regexp.MustCompile(`^0x[0-9a-fA-F]{40}$`)

func (c *Config) validate() []*FieldError {
	var errs []*FieldError
	bad := func(key, format string, args ...any) {
		errs = append(errs, &FieldError{Key: key, Msg: fmt.Sprintf(format, args...)})
	}
	if c.Database.URL == "" {
		bad("database.url", "is required (or set DATABASE_URL)")
	} else if !databaseURL(c.Database.URL) {
		bad("database.url", "must be a postgres://user@host:port/db URL (hosts may be a list: h1:5432,h2:5432)")
	}
	if c.Database.SessionURL != "" && !databaseURL(c.Database.SessionURL) {
		bad("database.session_url", "must be a postgres://user@host:port/db URL (hosts may be a list: h1:5432,h2:5432)")
	}
	for i, u := range c.Database.ReadURLs {
		if !databaseURL(u) {
			bad(fmt.Sprintf("database.read_urls[%d]", i), "must be a postgres://user@host:port/db URL")
		}
	}
	if c.Database.MaxConns < 1 || c.Database.MaxConns > 500 {
		bad("database.max_conns", "must be between 1 and 500")
	}
	if err := checkListen(c.API.Listen); err != nil {
		bad("api.listen", "%v", err)
	}
	for name, g := range c.API.Groups {
		key := "api.groups." + name
		if !slices.Contains(Groups, name) {
			bad(key, "unknown group %q (one of %s)", name, strings.Join(Groups, ", "))
			continue
		}
		if base, ok := LensBase[name]; ok && (g.Listen != "" || g.Host != "" || g.Prefix != "") {
			bad(key, "shares the base address of %s: place it with api.groups.%s (only public may be set here)", base, base)
			continue
		}
		if g.Listen != "" {
			if err := checkListen(g.Listen); err != nil {
				bad(key+".listen", "%v", err)
			}
		}
		if g.Prefix != "" && (!strings.HasPrefix(g.Prefix, "/") || strings.HasSuffix(g.Prefix, "/") || strings.ContainsAny(g.Prefix, "{} ?#")) {
			bad(key+".prefix", "must look like /name (leading slash, no trailing slash)")
		}
		if g.Host != "" && strings.ContainsAny(g.Host, "/ ") {
			bad(key+".host", "must be a host name, e.g. dex.example.com")
		}
		if g.Chain != "" {
			kind, reads := GroupKinds[name]
			ch, found := c.Chain(g.Chain)
			switch {
			case !reads:
				bad(key+".chain", "the %s group does not read one chain", name)
			case !found:
				bad(key+".chain", "no chain %q is configured", g.Chain)
			case ch.Kind != kind:
				bad(key+".chain", "chain %s is of kind %s; the %s group reads a chain of kind %s", g.Chain, ch.Kind, name, kind)
			}
		}
	}
	for _, base := range slices.Sorted(maps.Keys(GroupKinds)) {
		kind := GroupKinds[base]
		var ids []string
		for _, ch := range c.Chains {
			if ch.Kind == kind {
				ids = append(ids, ch.ID)
			}
		}
		if len(ids) > 1 && c.API.Groups[base].Chain == "" {
			bad("api.groups."+base+".chain", "%d chains of kind %s are configured (%s): name the one the %s group reads",
				len(ids), kind, strings.Join(ids, ", "), base)
		}
	}
	if c.Metrics.Listen != "" {
		if err := checkListen(c.Metrics.Listen); err != nil {
			bad("metrics.listen", "%v", err)
		}
	}
	if c.API.RateLimit.PerSecond < 0 {
		bad("api.rate_limit.per_second", "must be positive")
	}
	if c.API.RateLimit.Burst < 1 {
		bad("api.rate_limit.burst", "must be at least 1")
	}
	if c.API.Quota.Credits < 1 {
		bad("api.quota.credits", "must be at least 1")
	}
	for i, p := range c.API.TrustedProxies {
		if _, err := netip.ParsePrefix(p); err != nil {
			bad(fmt.Sprintf("api.trusted_proxies[%d]", i), "%q is not a CIDR such as 10.0.0.0/8 or 127.0.0.1/32", p)
		}
	}
	if _, err := CronParser.Parse(c.Aggregator.Schedule); err != nil {
		bad("aggregator.schedule", "bad cron spec %q: %v", c.Aggregator.Schedule, err)
	}
	for job, spec := range c.Aggregator.Jobs {
		if _, err := CronParser.Parse(spec); err != nil {
			bad("aggregator.jobs."+job, "bad cron spec %q: %v", spec, err)
		}
	}
	if !slices.Contains([]string{"debug", "info", "warn", "error"}, c.Log.Level) {
		bad("log.level", "must be one of debug, info, warn, error")
	}
	if !slices.Contains([]string{"json", "text"}, c.Log.Format) {
		bad("log.format", "must be json or text")
	}
	seen := map[string]bool{}
	for i := range c.Chains {
		errs = append(errs, c.Chains[i].validate(fmt.Sprintf("chains[%d]", i), seen)...)
	}
	if c.Engagement.MaxWalletsPerVisitor < 1 || c.Engagement.MaxWalletsPerVisitor > 1000 {
		bad("engagement.max_wallets_per_visitor", "must be between 1 and 1000")
	}
	switch {
	case c.Console.SampleEvery.D() < time.Second:
		bad("console.sample_every", "must be at least 1s")
	case c.Console.KeepFor.D() < c.Console.SampleEvery.D()*2:
		bad("console.keep_for", "must be at least twice console.sample_every")
	}
	if c.Console.SessionTTL.D() < time.Minute || c.Console.SessionTTL.D() > 24*time.Hour {
		bad("console.session_ttl", "must be between 1m and 24h")
	}
	errs = append(errs, c.Earn.validate(c.Chains)...)
	errs = append(errs, c.IBC.validate(c.Chains)...)
	errs = append(errs, c.Perp.validate(c.Chains)...)
	errs = append(errs, c.Staking.validate(c.Chains)...)
	return errs
}

func (ch *Chain) validate(key string, seen map[string]bool) []*FieldError {
	var errs []*FieldError
	bad := func(k, format string, args ...any) {
		errs = append(errs, &FieldError{Key: key + k, Msg: fmt.Sprintf(format, args...)})
	}
	switch {
	case ch.ID == "":
		bad(".id", "is required")
	case seen[ch.ID]:
		bad(".id", "chain %q is declared twice", ch.ID)
	case strings.ContainsAny(ch.ID, " /,="):
		bad(".id", "must not contain spaces, '/', ',' or '='")
	}
	seen[ch.ID] = true
	if !slices.Contains(Kinds, ch.Kind) {
		bad(".kind", "must be one of %s", strings.Join(Kinds, ", "))
	}
	if len(ch.RPC) == 0 {
		bad(".rpc", "needs at least one endpoint URL")
	}
	for j, r := range ch.RPC {
		u, err := url.Parse(r)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad(".rpc["+strconv.Itoa(j)+"]", "%q is not an http(s) URL", r)
		}
	}
	if ch.StartHeight < 0 {
		bad(".start_height", "must be 0 or more")
	}
	if ch.BatchSize < 1 || ch.BatchSize > 10000 {
		bad(".batch_size", "must be between 1 and 10000")
	}
	if ch.Concurrency < 1 || ch.Concurrency > 64 {
		bad(".concurrency", "must be between 1 and 64")
	}
	if ch.PollInterval.D() <= 0 {
		bad(".poll_interval", "must be positive")
	}
	if ch.SnapshotEvery < 0 {
		bad(".snapshot_every", "must be 0 (off) or more")
	}
	if ch.IsEVM() && ch.NewBlockHint {
		bad(".new_block_hint", "is for CometBFT chains (an evm chain is read by block ranges)")
	}
	if ch.IsEVM() {
		ch.validateEVM(bad)
		if ch.Raw != nil {
			bad(".raw", "filters the raw tables of cosmos chains (an evm chain has none)")
		}
		if ch.Retention != nil {
			bad(".retention", "applies to the raw tables of cosmos chains (an evm chain's blocks and logs are kept)")
		}
	} else {
		ch.Raw.validate(".raw", bad)
		if r := ch.Retention; r != nil && (r.KeepHeights < 0 || r.KeepFor < 0 || (r.KeepHeights == 0 && r.KeepFor == 0)) {
			bad(".retention", "needs keep_heights (a positive number of heights) or keep_for (a positive duration), or both")
		}
		if ch.Bech32Prefix == "" {
			ch.Bech32Prefix = defaultPrefix[ch.Kind]
		}
		if ch.Bech32Prefix == "" && slices.Contains(Kinds, ch.Kind) {
			bad(".bech32_prefix", "is required for kind %s", ch.Kind)
		}
		if len(ch.Tokens) > 0 {
			bad(".tokens", "only evm chains have token contracts")
		}
		if ch.CCTP != nil || len(ch.AddressLabels) > 0 || ch.EVMChainID != 0 {
			bad("", "cctp, address_labels and evm_chain_id are for evm chains")
		}
	}
	for j, a := range ch.Assets {
		ak := ".assets[" + strconv.Itoa(j) + "]"
		if a.Denom == "" {
			bad(ak+".denom", "is required")
		}
		if a.Exponent < 0 || a.Exponent > 36 {
			bad(ak+".exponent", "must be between 0 and 36")
		}
	}
	return errs
}

func checkListen(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q is not host:port", addr)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
		return fmt.Errorf("%q has a bad port", addr)
	}
	_ = host
	return nil
}

// databaseURL reports whether s is a postgres URL, whose host part may be
// a comma-separated list of host:port pairs (libpq's multi-host form).
func databaseURL(s string) bool {
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok || (scheme != "postgres" && scheme != "postgresql") {
		return false
	}
	authority, path, _ := strings.Cut(rest, "/")
	if i := strings.LastIndex(authority, "@"); i >= 0 {
		authority = authority[i+1:]
	}
	if authority == "" {
		return false
	}
	for h := range strings.SplitSeq(authority, ",") {
		if h == "" {
			return false
		}
		if _, err := url.Parse("postgres://" + h + "/" + path); err != nil {
			return false
		}
	}
	return true
}
