// Package dydxtest indexes the recorded dYdX localnet
// (testdata/localnet/dydx) into a test database through the replay node
// and the real indexer, and reads the node's own record of its fills.
package dydxtest

import (
	"compress/gzip"
	"encoding/json"
	"io"
	"math/big"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/chains/dydx"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/internal/replaytest"
	"github.com/chainlens/chainlens/internal/testdb"
)

// The recorded localnet: chain id and last height.
const (
	ChainID    = "localdydxprotocol"
	LastHeight = 520
)

// Dir is the folder of the recording.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", "localnet", "dydx")
}

// Index indexes heights 1..LastHeight of the recording into db with the
// dYdX adapter and returns the chain config used.
func Index(t testing.TB, db *bun.DB) config.Chain {
	t.Helper()
	cfg := config.Chain{ID: ChainID, Kind: dydx.Kind, BatchSize: 50, Concurrency: 4,
		PollInterval: config.Duration(50 * time.Millisecond), Bech32Prefix: "dydx"}
	return replaytest.Index(t, db, Dir(), cfg, dydx.NewAdapter(cfg.Bech32Prefix), LastHeight)
}

// Side is one side of a fill as the node recorded it.
type Side struct {
	Height    int64  `bun:"height"`
	Role      string `bun:"role"` // taker (the liquidated subaccount in a liquidation) or maker
	Address   string `bun:"address"`
	Size      string `bun:"size"`     // base quantums
	Notional  string `bun:"notional"` // quote quantums
	Liq       bool   `bun:"is_liquidation"`
	IsBuy     bool   `bun:"is_buy"`          // the side's position grew
	Insurance string `bun:"insurance_delta"` // quote quantums, the fill's insurance fund delta
}

// Match is one fill as the node recorded it (truth/fills.json).
type Match struct {
	Height      int64
	PerpetualID int64
	Taker       string // the liquidated subaccount's owner in a liquidation
	TakerNumber int64  // its subaccount number
	Maker       string
	Size        string // base quantums
	Notional    string // quote quantums
	TakerFee    string // quote quantums, from the recorder's copy of the match event
	MakerFee    string
	Liq         bool
	TakerBuy    bool   // the taker (or liquidated subaccount) bought
	Insurance   string // quote quantums: the insurance fund's delta
}

// Fills reads truth/fills.json and returns the two sides of every fill
// (see Matches).
func Fills(t testing.TB) []Side {
	t.Helper()
	var out []Side
	for _, m := range Matches(t) {
		out = append(out,
			Side{m.Height, "taker", m.Taker, m.Size, m.Notional, m.Liq, m.TakerBuy, m.Insurance},
			Side{m.Height, "maker", m.Maker, m.Size, m.Notional, m.Liq, !m.TakerBuy, m.Insurance})
	}
	return out
}

// Matches reads truth/fills.json (the fills of the decoded
// MsgProposedOperations) and truth/clob_pairs.json: size = the fill
// amount, notional = the maker order's subticks × the fill amount ×
// 10^quantum_conversion_exponent of the clob pair (for makers placed
// before the recording started, the exact price the recorder read off the
// match event), the perpetual of the clob pair.
func Matches(t testing.TB) []Match {
	t.Helper()
	var truth struct {
		Fills []struct {
			Height        int64  `json:"height"`
			Type          string `json:"type"`
			FillAmount    int64  `json:"fill_amount"`
			ClobPairID    int    `json:"clob_pair_id"`
			MakerSubticks *int64 `json:"maker_order_subticks"`
			EventSubticks int64  `json:"fill_subticks_from_event"`
			Exact         bool   `json:"fill_subticks_exact"`
			Taker         struct {
				Sub struct {
					Owner  string
					Number int64
				} `json:"subaccount_id"`
			} `json:"taker_order_id"`
			Maker struct {
				Sub struct{ Owner string } `json:"subaccount_id"`
			} `json:"maker_order_id"`
			Liquidated struct {
				Owner  string
				Number int64
			} `json:"liquidated"`
			LiqIsBuy  bool `json:"liquidation_is_buy"`
			TakerSide int  `json:"taker_order_side"` // 1 buy, 2 sell
			Event     struct {
				TakerFee  string `json:"taker_order_fee_quote_quantums"`
				MakerFee  string `json:"maker_order_fee_quote_quantums"`
				Insurance string `json:"insurance_fund_delta_quote_quantums"`
			} `json:"match_event"`
		} `json:"fills"`
	}
	var pairs struct {
		ClobPair []struct {
			ID   int `json:"id"`
			QCE  int `json:"quantum_conversion_exponent"`
			Perp struct {
				ID int64 `json:"perpetual_id"`
			} `json:"perpetual_clob_metadata"`
		} `json:"clob_pair"`
	}
	Truth(t, "fills.json", &truth)
	Truth(t, "clob_pairs.json", &pairs)
	qce := map[int]int{}
	perp := map[int]int64{}
	for _, p := range pairs.ClobPair {
		qce[p.ID], perp[p.ID] = p.QCE, p.Perp.ID
	}
	var out []Match
	for _, f := range truth.Fills {
		subticks := f.EventSubticks
		if f.MakerSubticks != nil {
			subticks = *f.MakerSubticks
		} else if !f.Exact {
			t.Fatalf("fill at height %d: no exact price in the truth", f.Height)
		}
		// quote quantums = subticks × base quantums × 10^qce (chain-events.md §6.3)
		n := new(big.Int).Mul(big.NewInt(subticks), big.NewInt(f.FillAmount))
		n.Quo(n, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-qce[f.ClobPairID])), nil))
		taker, number, liq, buy := f.Taker.Sub.Owner, f.Taker.Sub.Number, false, f.TakerSide == 1
		if f.Type == "match_perpetual_liquidation" {
			taker, number, liq, buy = f.Liquidated.Owner, f.Liquidated.Number, true, f.LiqIsBuy
		} else if f.TakerSide != 1 && f.TakerSide != 2 {
			t.Fatalf("fill at height %d: taker side %d", f.Height, f.TakerSide)
		}
		if f.Event.TakerFee == "" || f.Event.MakerFee == "" {
			t.Fatalf("fill at height %d: no fees in the truth", f.Height)
		}
		out = append(out, Match{Height: f.Height, PerpetualID: perp[f.ClobPairID], Taker: taker, TakerNumber: number, Maker: f.Maker.Sub.Owner,
			Size: big.NewInt(f.FillAmount).String(), Notional: n.String(), TakerFee: f.Event.TakerFee, MakerFee: f.Event.MakerFee, Liq: liq,
			TakerBuy: buy, Insurance: f.Event.Insurance})
	}
	return out
}

// Truth decodes truth/<name> of the recording (the node's own query
// results at the last height) into v.
func Truth(t testing.TB, name string, v any) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(Dir(), "truth", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// Price is an oracle market's price at the last height: price × 10^exponent.
type Price struct {
	Exponent int64
	Price    string
}

// MarketPrices reads truth/market_prices.json by market id.
func MarketPrices(t testing.TB) map[int64]Price {
	t.Helper()
	var prices struct {
		Prices []struct {
			ID       int64  `json:"id"`
			Exponent int64  `json:"exponent"`
			Price    string `json:"price"`
		} `json:"market_prices"`
	}
	Truth(t, "market_prices.json", &prices)
	out := map[int64]Price{}
	for _, p := range prices.Prices {
		out[p.ID] = Price{p.Exponent, p.Price}
	}
	return out
}

// Gunzip opens a gzipped file of the recording (blocks.jsonl.gz,
// genesis.json.gz); it is closed when the test ends.
func Gunzip(t testing.TB, name string) io.Reader {
	t.Helper()
	f, err := os.Open(filepath.Join(Dir(), name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return zr
}

// New returns a new test database holding heights 1..LastHeight of the
// recording, indexed through the real indexer once per test server
// (testdb.NewFrom), and the chain config (without an rpc).
func New(t testing.TB) (*bun.DB, config.Chain) {
	t.Helper()
	db := testdb.NewFrom(t, "dydx_localnet", func(db *bun.DB) { Index(t, db) })
	cfg := config.Chain{ID: ChainID, Kind: dydx.Kind, BatchSize: 50, Concurrency: 4,
		PollInterval: config.Duration(50 * time.Millisecond), Bech32Prefix: "dydx"}
	return db, cfg
}
