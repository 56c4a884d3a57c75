// Package config defines chainlens's configuration, loads it from YAML with
// environment overrides, and validates it strictly: an unknown key, a missing
// field or a malformed value is one error naming the key and its line.
package config

import (
	"time"
)

// Config is the whole configuration of every role (index, aggregate, serve).
type Config struct {
	Database   Database   `yaml:"database"`
	API        API        `yaml:"api"`
	Chains     []Chain    `yaml:"chains"`
	Aggregator Aggregator `yaml:"aggregator"`
	// Earn declares the earn strategies (dex group).
	Earn Earn `yaml:"earn"`
	// IBC declares the IBC channels between chains (dex group).
	IBC IBC `yaml:"ibc"`
	// Perp holds the addresses the perp groups are told about.
	Perp Perp `yaml:"perp"`
	// Staking names the liquid-staking providers' accounts on the Hub.
	Staking Staking `yaml:"staking"`
	// Engagement tunes attribution.
	Engagement Engagement `yaml:"engagement"`
	Log        Log        `yaml:"log"`
	// Metrics places /metrics, /healthz and /readyz of the processes that
	// serve no API (index, aggregate); the API listeners always serve them.
	Metrics Metrics `yaml:"metrics"`
	// Console tunes the operator console (/console on the engagement
	// listener) and the history behind its charts.
	Console Console `yaml:"console"`
}

// Console tunes the operator console. Every process samples its own
// Prometheus series into Postgres (console_samples) every SampleEvery and
// deletes the samples older than KeepFor, so the charts' history has a
// bounded size whatever runs where.
type Console struct {
	SampleEvery Duration `yaml:"sample_every"` // default 1m
	KeepFor     Duration `yaml:"keep_for"`     // default 48h (the day charts need 24h)
	// SessionTTL is how long a console login lasts (default 1h).
	SessionTTL Duration `yaml:"session_ttl"`
}

// Metrics is the listener of a process without an API.
type Metrics struct {
	Listen string `yaml:"listen"` // e.g. 127.0.0.1:9090; "" = none
}

// Database is the Postgres connection.
type Database struct {
	// URL is the primary, for every write: postgres://user@host:port/db?sslmode=disable.
	// It may go through a pooler in transaction mode (pgbouncer) when
	// SessionURL is set. It may list every server of a replicated cluster,
	// as libpq does, to find the primary by itself after a failover:
	// postgres://user@h1:5432,h2:5432/db?target_session_attrs=read-write.
	URL      string `yaml:"url"`
	MaxConns int    `yaml:"max_conns"` // pool size; default 10 (an indexing process adds one per chain, for its lock)
	// SessionURL is a direct connection to the primary (never through a
	// transaction-mode pooler) for what needs one session across
	// transactions: the indexing locks, LISTEN for data changes, the
	// campaign selection's prepared statement. Empty: URL.
	SessionURL string `yaml:"session_url"`
	// ReadURLs are streaming replicas analytics answers are read from, in
	// turn (serve only); writes and LISTEN stay on the primary.
	ReadURLs []string `yaml:"read_urls"`
	// MaxReplicaLag is how far behind the primary a replica may be and
	// still be read from (default 30s); when no replica is within it,
	// answers are read from the primary.
	MaxReplicaLag Duration `yaml:"max_replica_lag"`
}

// API configures the HTTP server of every endpoint group.
type API struct {
	// Listen is the default listener; groups without their own listener are served here.
	Listen string `yaml:"listen"`
	// Groups places each base address family (engagement, dex, perp,
	// stablecoins, dex2, staking, smart_account) on its own listener, host
	// name or path prefix, and may make any of the nine groups public
	// (dex_lens and perp_lens, placed with dex and perp, take only public).
	Groups map[string]GroupServe `yaml:"groups"`
	// RateLimit is the per-key token bucket.
	RateLimit RateLimit `yaml:"rate_limit"`
	// Quota is the default credit quota of a new key per period.
	Quota Quota `yaml:"quota"`
	// Timeouts of the HTTP server.
	Timeouts Timeouts `yaml:"timeouts"`
	// CacheTTL is the longest an analytics answer is kept in memory. The
	// database announces every commit of indexed or report data (NOTIFY),
	// and an answer is recomputed as soon as a change of its data is
	// announced; while announcements are not received, answers are kept at
	// most 1 s. 0 = off.
	CacheTTL Duration `yaml:"cache_ttl"`
	// CacheStale is how long past its expiry an answer is still sent while
	// one background request recomputes it (stale-while-revalidate), so a
	// popular URL never waits for its queries; 0 = an expired answer is
	// recomputed before it is sent.
	CacheStale Duration `yaml:"cache_stale"`
	// DocsTitle names the service in the OpenAPI document and docs page.
	DocsTitle string `yaml:"docs_title"`
	// TrustedProxies are the CIDRs of reverse proxies whose
	// X-Forwarded-For names the client (the click IP); empty = the peer
	// address is the client.
	TrustedProxies []string `yaml:"trusted_proxies"`
}

// GroupServe places one base address family.
type GroupServe struct {
	Listen string `yaml:"listen"` // its own listener, e.g. 127.0.0.1:8081
	Host   string `yaml:"host"`   // served for requests with this Host header
	Prefix string `yaml:"prefix"` // served under this path prefix, e.g. /dex
	Public bool   `yaml:"public"` // no API key needed for this group (not for the lens group sharing its address)
	// Chain is the id of the chain the group reads (GroupKinds), needed
	// when more than one chain of its kind is configured; default: the
	// only one.
	Chain string `yaml:"chain"`
}

// RateLimit is a token bucket per key.
type RateLimit struct {
	PerSecond float64 `yaml:"per_second"` // default 50
	Burst     int     `yaml:"burst"`      // default 100
}

// Quota is a credit budget per period.
type Quota struct {
	Credits int64    `yaml:"credits"` // default 1,000,000
	Period  Duration `yaml:"period"`  // default 720h (30 days)
}

// Timeouts bound slow clients.
type Timeouts struct {
	ReadHeader Duration `yaml:"read_header"` // default 5s
	Read       Duration `yaml:"read"`        // default 15s
	Write      Duration `yaml:"write"`       // default 30s
	Idle       Duration `yaml:"idle"`        // default 120s
	Handler    Duration `yaml:"handler"`     // per-request deadline; default 10s
}

// Aggregator schedules report jobs.
type Aggregator struct {
	// Schedule is the default cron spec of every job (robfig/cron with seconds optional).
	Schedule string `yaml:"schedule"` // default "@every 30s"
	// Jobs overrides the schedule of single jobs by name.
	Jobs map[string]string `yaml:"jobs"`
}

// Log configures log/slog output.
type Log struct {
	Level  string `yaml:"level"`  // debug, info, warn, error; default info
	Format string `yaml:"format"` // json or text; default json
}

// Chain declares one indexed chain.
type Chain struct {
	ID   string   `yaml:"id"`   // chain id, e.g. osmosis-1
	Name string   `yaml:"name"` // chain-registry name, e.g. osmosis; default the registry's chain_name
	Kind string   `yaml:"kind"` // osmosis | dydx | neutron | cosmoshub | xion | noble | cosmos | evm
	RPC  []string `yaml:"rpc"`  // several = failover
	// Registry declares the chain from cosmos chain-registry files; fields set
	// here win over the registry's.
	Registry *Registry `yaml:"registry"`

	StartHeight   int64    `yaml:"start_height"`   // first height to index; 0 = the node's earliest
	BatchSize     int      `yaml:"batch_size"`     // heights committed per transaction; default 100 (1000 for evm)
	Concurrency   int      `yaml:"concurrency"`    // heights fetched in parallel; default 4
	PollInterval  Duration `yaml:"poll_interval"`  // wait at the tip; default 1s
	Bech32Prefix  string   `yaml:"bech32_prefix"`  // account prefix, e.g. osmo
	Confirmations int      `yaml:"confirmations"`  // EVM: index up to latest - confirmations
	SnapshotEvery int64    `yaml:"snapshot_every"` // state snapshot every N heights; 0 = off
	// AllowPrunedStart starts at the node's earliest height when StartHeight
	// is below it, instead of failing. It applies to a chain's first start
	// only: once blocks are indexed, a pruned next height stops the indexer
	// (skipping it would leave a gap).
	AllowPrunedStart bool `yaml:"allow_pruned_start"`
	// NewBlockHint subscribes to the first RPC node's new block headers
	// over its websocket and polls at once when one arrives (a hint: the
	// poll_interval polling goes on, so a lost socket only adds latency).
	NewBlockHint bool `yaml:"new_block_hint"`
	// FeeDenoms are the chain's fee tokens.
	FeeDenoms []string `yaml:"fee_denoms"`
	// StakingDenom is the bond denom.
	StakingDenom string `yaml:"staking_denom"`
	// Tokens are the ERC-20 contracts indexed on an EVM chain.
	Tokens []Token `yaml:"tokens"`
	// EVMChainID is the node's eth_chainId, checked at start; default the
	// number that ends ID ("base-8453" → 8453). Set it when a chain stands
	// in for another (a devnet serving as ethereum-1).
	EVMChainID uint64 `yaml:"evm_chain_id"`
	// CCTP names the chain's Circle CCTP v1 contracts (bridge flows).
	CCTP *CCTP `yaml:"cctp"`
	// AddressLabels gives counterparty addresses of an EVM chain a category
	// (dex, cex, bridge, lending, other): the stablecoin category endpoints,
	// and bridge flows through bridge-labelled addresses. Unlabelled
	// addresses are "other"; the zero address is "mint_burn".
	AddressLabels map[string]string `yaml:"address_labels"`
	// Assets is metadata of the chain's denoms.
	Assets []Asset `yaml:"assets"`
	// DescriptorSets names shipped protobuf descriptor sets to decode the
	// chain's messages with besides its kind's own (e.g. [injective] for a
	// chain of kind cosmos); `chainlens status` lists the shipped sets. The
	// node's own descriptors, when it serves them, come first.
	DescriptorSets []string `yaml:"descriptor_sets"`
	// Raw keeps only some messages and events in the raw tables (cosmos
	// chains); nil keeps all.
	Raw *RawFilter `yaml:"raw"`
	// Retention bounds how much of the chain's raw tables (blocks, txs,
	// messages, events, message addresses, commit signatures) is kept;
	// nil keeps everything. Reports and the domain tables stay.
	Retention *Retention `yaml:"retention"`
}

// Retention keeps the raw rows of a chain's last KeepHeights heights
// and/or of its last KeepFor of block time (both set: whichever keeps
// more). Whole partitions of a million heights are dropped once every
// height in them is older, and never one an aggregator job that reads the
// raw tables has not read yet.
type Retention struct {
	KeepHeights int64    `yaml:"keep_heights"`
	KeepFor     Duration `yaml:"keep_for"`
}

// Registry points at chain-registry files.
type Registry struct {
	Chain     string `yaml:"chain"`     // path to chain.json
	Assetlist string `yaml:"assetlist"` // path to assetlist.json (optional)
}

// Token is an ERC-20 contract on an EVM chain.
type Token struct {
	Address  string `yaml:"address"` // 0x-prefixed contract address
	Symbol   string `yaml:"symbol"`
	Name     string `yaml:"name"`
	Decimals int    `yaml:"decimals"`
	// PriceUSD values one display unit in USD (a decimal string); default
	// "1", the peg, for the USD stablecoins (config.USDStablecoins), and
	// required for other tokens. Changing it revalues the history the next
	// time the stablecoin job runs.
	PriceUSD string `yaml:"price_usd"`
	// Owner is the TetherToken-style owner that Issue credits and Redeem
	// debits; unset, it is read with eth_call owner() at each such log.
	Owner string `yaml:"owner"`
}

// Asset is the metadata of one denom.
type Asset struct {
	Denom        string `yaml:"denom"`   // base denom, e.g. uosmo or ibc/...
	Symbol       string `yaml:"symbol"`  // e.g. OSMO
	Name         string `yaml:"name"`    // e.g. Osmosis
	Display      string `yaml:"display"` // display denom, e.g. osmo
	Exponent     int    `yaml:"exponent"`
	MarketDataID string `yaml:"market_data_id"` // id at the market-data vendor
	Logo         string `yaml:"logo"`
	Main         bool   `yaml:"main"` // in the curated main list
}

// Duration is a time.Duration written as a Go duration string ("1s", "5m").
type Duration time.Duration

// D returns the value as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// FirstChain returns the first configured chain of kind (the chain an
// endpoint group of that kind serves), if any.
func (c *Config) FirstChain(kind string) (Chain, bool) {
	if c == nil {
		return Chain{}, false
	}
	for _, ch := range c.Chains {
		if ch.Kind == kind {
			return ch, true
		}
	}
	return Chain{}, false
}

// GroupChain is the chain an endpoint group's base family reads: the one
// api.groups.<base>.chain names, else the first configured chain of the
// group's kind (GroupKinds).
func (c *Config) GroupChain(base string) (Chain, bool) {
	if c == nil {
		return Chain{}, false
	}
	if id := c.API.Groups[base].Chain; id != "" {
		for _, ch := range c.Chains {
			if ch.ID == id && ch.Kind == GroupKinds[base] {
				return ch, true
			}
		}
		return Chain{}, false
	}
	return c.FirstChain(GroupKinds[base])
}

// Chain returns the configured chain with this id, if any.
func (c *Config) Chain(id string) (Chain, bool) {
	if c == nil {
		return Chain{}, false
	}
	for _, ch := range c.Chains {
		if ch.ID == id {
			return ch, true
		}
	}
	return Chain{}, false
}

// Engagement tunes the attribution of conversions.
type Engagement struct {
	// MaxWalletsPerVisitor bounds the wallets one anonymous visitor (an
	// SDK anonymousId) is linked to: past it (a shared computer, a bot)
	// new links are refused and counted (identity_link_refusals). Default
	// 10.
	MaxWalletsPerVisitor int `yaml:"max_wallets_per_visitor"`
}
