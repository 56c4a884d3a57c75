package cosmos

import (
	"fmt"

	"cosmossdk.io/math"

	"github.com/chainlens/chainlens/chains"
)

var mintTable = chains.Table{Name: "mint_events", Columns: []string{
	"chain_id", "height", "event_index", "bonded_ratio", "inflation", "annual_provisions", "amount",
}}

var blockRewardsTable = chains.Table{Name: "block_rewards", Columns: []string{
	"chain_id", "height", "kind", "denom", "amount",
}}

// mintRows records x/mint provisions (events with inflation and
// bonded_ratio; chains with their own mint module emit other keys and are
// handled by their adapter).
func mintRows(b *chains.Block, out *chains.Rows) error {
	for i := range b.Events {
		ev := &b.Events[i]
		if ev.Type != "mint" {
			continue
		}
		inflation, ok1 := ev.Get("inflation")
		ratio, ok2 := ev.Get("bonded_ratio")
		provisions, _ := ev.Get("annual_provisions")
		amount, ok := ev.Get("amount")
		if !ok { // XION's mint reports minted_amount instead
			amount, ok = ev.Get("minted_amount")
		}
		if !ok1 || !ok2 {
			continue
		}
		if !ok {
			amount = "0"
		}
		for _, v := range []string{inflation, ratio, provisions, amount} {
			if _, err := math.LegacyNewDecFromStr(v); err != nil {
				return fmt.Errorf("mint event %d: %q is not a decimal", ev.Index, v)
			}
		}
		out.Add(mintTable.Name, b.ChainID, b.Height, ev.Index, ratio, inflation, provisions, amount)
	}
	return nil
}

// blockRewardRows sums the begin-block rewards, commission and proposer
// reward events over all validators, per denom, with exact decimals. On a
// part of a height (b.Part set) it adds the part's events to the running
// sums and writes the rows on the last call.
func blockRewardRows(b *chains.Block, out *chains.Rows) error {
	s := &rewardSums{sums: map[rewardKey]math.LegacyDec{}}
	if b.Part != nil {
		if b.Part.State == nil {
			b.Part.State = map[string]any{}
		}
		if prev, ok := b.Part.State[rewardsState].(*rewardSums); ok {
			s = prev
		} else {
			b.Part.State[rewardsState] = s
		}
	}
	if err := s.add(b.Events); err != nil {
		return err
	}
	if b.Part == nil || b.Part.Last {
		s.rows(b, out)
	}
	return nil
}

// rewardsState is the key of blockRewardRows' running sums in Part.State.
const rewardsState = "cosmos.block_rewards"

type rewardKey struct{ kind, denom string }

// rewardSums are block_rewards totals in order of first appearance.
type rewardSums struct {
	sums  map[rewardKey]math.LegacyDec
	order []rewardKey
}

func (s *rewardSums) add(evs []chains.Event) error {
	for i := range evs {
		ev := &evs[i]
		if ev.Type != "rewards" && ev.Type != "commission" && ev.Type != "proposer_reward" {
			continue
		}
		amount, _ := ev.Get("amount")
		coins, err := chains.ParseCoins(amount)
		if err != nil {
			return fmt.Errorf("%s event %d: %w", ev.Type, ev.Index, err)
		}
		for _, c := range coins {
			d, err := math.LegacyNewDecFromStr(c.Amount)
			if err != nil {
				return fmt.Errorf("%s event %d: %w", ev.Type, ev.Index, err)
			}
			k := rewardKey{ev.Type, c.Denom}
			if sum, ok := s.sums[k]; ok {
				s.sums[k] = sum.Add(d)
			} else {
				s.sums[k] = d
				s.order = append(s.order, k)
			}
		}
	}
	return nil
}

func (s *rewardSums) rows(b *chains.Block, out *chains.Rows) {
	for _, k := range s.order {
		out.Add(blockRewardsTable.Name, b.ChainID, b.Height, k.kind, k.denom, s.sums[k].String())
	}
}
