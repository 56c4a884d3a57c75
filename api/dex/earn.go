package dex

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"cosmossdk.io/math"
	"github.com/cosmos/cosmos-sdk/types/bech32"
	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/api"
	"github.com/chainlens/chainlens/api/problem"
	"github.com/chainlens/chainlens/api/route"
	"github.com/chainlens/chainlens/config"
)

// lpShareDecimals is the exponent of gamm LP shares (1 share = 10^18).
const lpShareDecimals = 18

// errNoStrategies answers every earn endpoint when the operator declared
// no strategy.
func errNoStrategies() error {
	return problem.NotConfigured("earn.strategies", "no earn strategy is configured")
}

// EarnService answers the earn endpoints from the dex_earn job's tables
// (earn_strategy_state, earn_strategy_assets, earn_strategy_balances) for
// the strategies declared in config.
type EarnService struct {
	*Service
	strategies []config.Strategy
}

// NewEarn returns the earn service of cfg's strategies.
func NewEarn(cfg *config.Config, db *bun.DB) *EarnService {
	e := &EarnService{Service: New(cfg, db)}
	if cfg != nil {
		e.strategies = cfg.Earn.Strategies
	}
	return e
}

// Handlers binds the earn operations.
func (e *EarnService) Handlers() map[route.ID]api.Handler {
	return map[route.ID]api.Handler{
		route.DexEarnStrategies: e.list,
		route.DexEarnBalance:    e.balance,
		route.DexEarnAPR:        e.apr,
		route.DexEarnTVL:        e.tvl,
	}
}

// TVL is a strategy's value locked: USD as decimal strings.
type TVL struct {
	TVLUSD string     `json:"tvlUsd"`
	Assets []TVLAsset `json:"assets"`
}

// TVLAsset is one asset of a TVL.
type TVLAsset struct {
	CoinMinimalDenom string `json:"coinMinimalDenom"`
	TVL              string `json:"tvl"`
}

// DenomInfo names a denom.
type DenomInfo struct {
	Denom  string `json:"denom"`
	Name   string `json:"name"`
	Symbol string `json:"symbol"`
}

// Strategy is an item of the strategies list.
type Strategy struct {
	ID           string      `json:"id"`
	Type         string      `json:"type"`
	Name         string      `json:"name"`
	Provider     string      `json:"provider"`
	Category     string      `json:"category"`
	Link         string      `json:"link"`
	TVL          TVL         `json:"tvl"`
	APR          json.Number `json:"apr"`
	TokenDenoms  []DenomInfo `json:"tokenDenoms"`
	RewardDenoms []DenomInfo `json:"rewardDenoms"`
	LockDuration *int64      `json:"lockDuration,omitempty"`
}

// Balance is an address's position in a strategy.
type Balance struct {
	Strategy         string       `json:"strategy"`
	Balance          BalanceValue `json:"balance"`
	Token            *ShareToken  `json:"token,omitempty"`
	UnclaimedRewards RewardsValue `json:"unclaimed_rewards"`
}

// BalanceValue is an amount in base units and its USD value.
type BalanceValue struct {
	Amount string      `json:"amount"`
	USD    json.Number `json:"usd"`
}

// ShareToken describes the token a strategy's balance is counted in.
type ShareToken struct {
	Name        string `json:"name"`
	Symbol      string `json:"symbol"`
	Decimals    int    `json:"decimals"`
	TotalSupply string `json:"total_supply"`
}

// RewardsValue is the USD value of rewards not claimed yet.
type RewardsValue struct {
	TotalUSD json.Number `json:"total_usd"`
}

// state is a strategy's earn_strategy_state row with its assets.
type state struct {
	TVLUSD      string `bun:"tvl_usd"`
	APR         string `bun:"apr"`
	ShareDenom  string `bun:"share_denom"`
	TotalShares string `bun:"total_shares"`
	assets      []TVLAsset
	denoms      []string
}

// strategy finds a declared strategy; an undeclared id is 404 (503
// not-configured when no strategy is declared at all).
func (e *EarnService) strategy(id string) (config.Strategy, error) {
	if len(e.strategies) == 0 {
		return config.Strategy{}, errNoStrategies()
	}
	for _, s := range e.strategies {
		if s.ID == id {
			return s, nil
		}
	}
	return config.Strategy{}, fmt.Errorf("strategy %s: %w", id, problem.ErrNotFound)
}

// state reads a strategy's rows; ok is false before the job's first run.
func (e *EarnService) state(ctx context.Context, id string) (state, bool, error) {
	var st state
	err := e.db.NewRaw(`SELECT tvl_usd::text AS tvl_usd, apr::text AS apr, share_denom, total_shares::text AS total_shares
		FROM earn_strategy_state WHERE strategy = ? AND chain_id = ?`, id, e.market.ChainID).Scan(ctx, &st)
	if errors.Is(err, sql.ErrNoRows) {
		return st, false, nil
	}
	if err != nil {
		return st, false, fmt.Errorf("strategy %s: %w", id, err)
	}
	var assets []struct {
		Denom string `bun:"denom"`
		TVL   string `bun:"tvl_usd"`
	}
	if err := e.db.NewRaw("SELECT denom, tvl_usd::text AS tvl_usd FROM earn_strategy_assets WHERE strategy = ? ORDER BY denom", id).Scan(ctx, &assets); err != nil {
		return st, false, fmt.Errorf("assets of %s: %w", id, err)
	}
	st.assets = make([]TVLAsset, 0, len(assets))
	for _, a := range assets {
		st.assets = append(st.assets, TVLAsset{CoinMinimalDenom: a.Denom, TVL: decimalString(a.TVL)})
		st.denoms = append(st.denoms, a.Denom)
	}
	return st, true, nil
}

// stateOf is state for a single-strategy endpoint: a declared strategy the
// job has not reached yet is 503.
func (e *EarnService) stateOf(ctx context.Context, id string) (state, api.Freshness, error) {
	fresh, err := e.begin(ctx)
	if err != nil {
		return state{}, fresh, err
	}
	if _, err := e.strategy(id); err != nil {
		return state{}, fresh, err
	}
	st, ok, err := e.state(ctx, id)
	if err != nil {
		return st, fresh, err
	}
	if !ok {
		return st, fresh, fmt.Errorf("strategy %s not computed yet (dex_earn job): %w", id, problem.ErrNotIndexed)
	}
	return st, fresh, nil
}

// decimalString trims a numeric's trailing zeros.
func decimalString(s string) string { return api.Number(s).String() }

func (e *EarnService) denomInfos(denoms []string) []DenomInfo {
	out := make([]DenomInfo, 0, len(denoms))
	for _, d := range denoms {
		a := e.market.Assets[d]
		out = append(out, DenomInfo{Denom: d, Name: a.Name, Symbol: a.Symbol})
	}
	return out
}

// list answers every declared strategy the dex_earn job has computed, in
// config order. An LP strategy's tokens are the pool's denoms, and so are
// its rewards (swap fees are paid in them).
func (e *EarnService) list(ctx context.Context, _ *api.Request) (*api.Response, error) {
	fresh, err := e.begin(ctx)
	if err != nil {
		return nil, err
	}
	if len(e.strategies) == 0 {
		return nil, errNoStrategies()
	}
	out := make([]Strategy, 0, len(e.strategies))
	for _, s := range e.strategies {
		st, ok, err := e.state(ctx, s.ID)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		item := Strategy{ID: s.ID, Type: s.Type, Name: s.Name, Provider: s.Provider, Category: s.Category, Link: s.Link,
			TVL: TVL{TVLUSD: decimalString(st.TVLUSD), Assets: st.assets}, APR: api.Number(st.APR),
			TokenDenoms: e.denomInfos(st.denoms), RewardDenoms: e.denomInfos(st.denoms)}
		if s.LockDuration > 0 {
			secs := int64(s.LockDuration.D().Seconds())
			item.LockDuration = &secs
		}
		out = append(out, item)
	}
	return &api.Response{Body: out, Freshness: fresh}, nil
}

func (e *EarnService) apr(ctx context.Context, req *api.Request) (*api.Response, error) {
	st, fresh, err := e.stateOf(ctx, req.Params.String("strategy"))
	if err != nil {
		return nil, err
	}
	return &api.Response{Body: map[string]json.Number{"apr": api.Number(st.APR)}, Freshness: fresh}, nil
}

func (e *EarnService) tvl(ctx context.Context, req *api.Request) (*api.Response, error) {
	st, fresh, err := e.stateOf(ctx, req.Params.String("strategy"))
	if err != nil {
		return nil, err
	}
	return &api.Response{Body: TVL{TVLUSD: decimalString(st.TVLUSD), Assets: st.assets}, Freshness: fresh}, nil
}

// balance answers an address's LP shares (bank-held and locked) and their
// USD value: shares / total shares × TVL. gamm LP shares have nothing to
// claim: swap fees are added to the pool's reserves and lockup incentives
// are paid out by x/incentives at each epoch, so unclaimed_rewards is 0.
func (e *EarnService) balance(ctx context.Context, req *api.Request) (*api.Response, error) {
	id, addr := req.Params.String("strategy"), req.Params.String("address")
	if _, err := e.strategy(id); err != nil {
		return nil, err
	}
	if prefix, _, err := bech32.DecodeAndConvert(addr); err != nil || prefix != e.market.Prefix {
		return nil, problem.BadParam("address", fmt.Sprintf("must be a %s1... address", e.market.Prefix))
	}
	st, fresh, err := e.stateOf(ctx, id)
	if err != nil {
		return nil, err
	}
	amount := "0"
	err = e.db.NewRaw("SELECT amount::text FROM earn_strategy_balances WHERE strategy = ? AND address = ?", id, addr).Scan(ctx, &amount)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("balance of %s in %s: %w", addr, id, err)
	}
	shares, ok1 := math.NewIntFromString(amount)
	total, ok2 := math.NewIntFromString(st.TotalShares)
	tvl, err := math.LegacyNewDecFromStr(st.TVLUSD)
	if !ok1 || !ok2 || err != nil {
		return nil, fmt.Errorf("strategy %s rows: shares %q of %q, tvl %q", id, amount, st.TotalShares, st.TVLUSD)
	}
	usd := math.LegacyZeroDec()
	if total.IsPositive() {
		usd = tvl.MulInt(shares).QuoInt(total)
	}
	symbol := strings.ToUpper(strings.ReplaceAll(st.ShareDenom, "/", "-")) // gamm/pool/1 -> GAMM-POOL-1
	return &api.Response{Body: Balance{
		Strategy:         id,
		Balance:          BalanceValue{Amount: shares.String(), USD: api.Number(usd.String())},
		Token:            &ShareToken{Name: st.ShareDenom, Symbol: symbol, Decimals: lpShareDecimals, TotalSupply: total.String()},
		UnclaimedRewards: RewardsValue{TotalUSD: "0"},
	}, Freshness: fresh}, nil
}
