package dex

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/api"
	"github.com/chainlens/chainlens/api/problem"
	"github.com/chainlens/chainlens/api/route"
	"github.com/chainlens/chainlens/config"
)

// IBCService answers the IBC status from ibc_packet_status (the
// ibc_packets.<chain id> jobs of aggregator/ibc).
type IBCService struct {
	db       *bun.DB
	chains   map[string]config.Chain // chain-registry name -> indexed chain
	known    map[string]bool         // every chain name of the config
	channels []config.IBCChannel
}

// NewIBC returns the IBC service of cfg's chains and channels.
func NewIBC(cfg *config.Config, db *bun.DB) *IBCService {
	s := &IBCService{db: db, chains: map[string]config.Chain{}, known: map[string]bool{}}
	if cfg == nil {
		return s
	}
	for _, ch := range cfg.Chains {
		if ch.Name != "" && !ch.IsEVM() {
			s.chains[ch.Name] = ch
			s.known[ch.Name] = true
		}
	}
	for _, c := range cfg.IBC.Channels {
		s.known[c.Chain], s.known[c.Counterparty] = true, true
	}
	s.channels = cfg.IBC.Channels
	return s
}

// Handlers binds the IBC operation.
func (s *IBCService) Handlers() map[route.ID]api.Handler {
	return map[route.ID]api.Handler{route.DexIBCStatus: s.status}
}

// ChannelStatus is one transfer channel's queue.
type ChannelStatus struct {
	Source          string `json:"source"`
	Destination     string `json:"destination"`
	ChannelID       string `json:"channel_id"`
	SizeQueue       int64  `json:"size_queue"`
	DurationMinutes int64  `json:"duration_minutes"`
}

// status answers, per declared transfer channel (port transfer on the
// source's side) from source to destination (config ibc.channels, either
// way round), the packets the source sent on it that
// are not yet acknowledged, timed out or received (size_queue) and the age
// in whole minutes, at the request time, of the oldest of them
// (duration_minutes, 0 when none). A name no configured chain or channel
// carries is 404; a source that is not an indexed chain is 503 (its sends
// are not known).
func (s *IBCService) status(ctx context.Context, req *api.Request) (*api.Response, error) {
	if len(s.channels) == 0 {
		return nil, problem.NotConfigured("ibc.channels", "no IBC transfer channel is configured")
	}
	src, dst := req.Params.String("source"), req.Params.String("destination")
	for _, name := range []string{src, dst} {
		if !s.known[name] {
			return nil, fmt.Errorf("chain %s: %w", name, problem.ErrNotFound)
		}
	}
	ch, ok := s.chains[src]
	if !ok {
		return nil, problem.NotConfigured("chains", "chain "+src+" is named by ibc.channels but no configured chain indexes it")
	}
	fresh, err := Freshness(ctx, api.Reader(ctx, s.db), ch.ID)
	if err != nil {
		return nil, err
	}
	if d, ok := s.chains[dst]; ok && d.ID != ch.ID {
		df, err := Freshness(ctx, api.Reader(ctx, s.db), d.ID)
		switch {
		case err == nil:
			fresh.Chains = append(fresh.Chains, df.Chains...)
		case !errors.Is(err, problem.ErrNotIndexed):
			return nil, err
		}
	}
	type end struct{ port, channel string }
	seen := map[end]bool{}
	var ends []end
	for _, c := range s.channels {
		var e end
		switch {
		case c.Chain == src && c.Counterparty == dst:
			e = end{c.Port, c.Channel}
		case c.Chain == dst && c.Counterparty == src:
			e = end{c.CounterpartyPort, c.CounterpartyChannel}
		default:
			continue
		}
		if e.port != "transfer" { // transfer channels only (interchain queries, contracts' ports are not)
			continue
		}
		if !seen[e] {
			seen[e] = true
			ends = append(ends, e)
		}
	}
	sort.Slice(ends, func(i, j int) bool { return channelLess(ends[i].channel, ends[j].channel) })
	out := make([]ChannelStatus, 0, len(ends))
	for _, e := range ends {
		var q struct {
			Size   int64      `bun:"size"`
			Oldest *time.Time `bun:"oldest"`
		}
		if err := api.Reader(ctx, s.db).NewRaw(`SELECT count(*) AS size, min(sent_at) AS oldest FROM ibc_packet_status
			WHERE chain_id = ? AND src_port = ? AND src_channel = ? AND sent_at IS NOT NULL AND closed_by IS NULL`,
			ch.ID, e.port, e.channel).Scan(ctx, &q); err != nil {
			return nil, fmt.Errorf("queue of %s %s: %w", ch.ID, e.channel, err)
		}
		row := ChannelStatus{Source: src, Destination: dst, ChannelID: e.channel, SizeQueue: q.Size}
		if q.Oldest != nil {
			row.DurationMinutes = int64(math.Max(0, math.Floor(req.Now.Sub(*q.Oldest).Minutes())))
		}
		out = append(out, row)
	}
	return &api.Response{Body: out, Freshness: fresh}, nil
}

// channelLess orders channel-2 before channel-10.
func channelLess(a, b string) bool {
	na, ea := strconv.Atoi(strings.TrimPrefix(a, "channel-"))
	nb, eb := strconv.Atoi(strings.TrimPrefix(b, "channel-"))
	if ea != nil || eb != nil || na == nb {
		return a < b
	}
	return na < nb
}
