package synthdydx

import (
	"math"
	"math/big"

	"github.com/chainlens/chainlens/devchain/synthcomet"
	abci "github.com/cometbft/cometbft/abci/types"
)

// takerBurst: 2 % of blocks carry 20 times the rate of taker orders;
// burstMean is the mean factor, so the daily count stays TakersPerDay.
const (
	burstShare  = 0.02
	burstFactor = 20
	burstMean   = 1 - burstShare + burstShare*burstFactor
)

// proposedOperations adds the block's MsgProposedOperations: for each
// taker order the makers' short-term order placements, the taker's (none
// for a liquidation) and the match, with the fills' events; fees adds what
// the fee collector received.
func (g *generator) proposedOperations(h int64, b *synthcomet.Builder, fees *int64) error {
	lambda := g.p.perBlock(g.p.TakersPerDay) / burstMean
	if g.rng.Float64() < burstShare {
		lambda *= burstFactor
	}
	n := 0
	if len(g.st.active) > 0 && h > 1 {
		n = synthcomet.Poisson(g.rng, lambda)
	}
	ops := []any{}
	events := []abci.Event{event("message", "action", msgProposedOperations, "module", "clob", "msg_index", "0")}
	for range n {
		o, ev, err := g.takerOrder(h, fees)
		if err != nil {
			return err
		}
		ops = append(ops, o...)
		events = append(events, ev...)
	}
	m, err := g.anyOf(msgProposedOperations, map[string]any{"operations_queue": ops})
	if err != nil {
		return err
	}
	tx, err := g.txBytes(m, nil, 0, 0)
	if err != nil {
		return err
	}
	b.Add(tx, &abci.ExecTxResult{Data: synthcomet.MsgData(msgProposedOperations), GasWanted: -1, Events: events})
	return nil
}

// subaccountID is the proto3 JSON of subaccount 0 of a.
func subaccountID(a *account) map[string]any { return map[string]any{"owner": a.addr, "number": 0} }

// orderID is the proto3 JSON of a short-term order's id.
func orderID(a *account, client uint32, clobPair int) map[string]any {
	return map[string]any{"subaccount_id": subaccountID(a), "client_id": client, "order_flags": 0, "clob_pair_id": clobPair}
}

// takerOrder makes one taker order (or liquidation) and its fills.
func (g *generator) takerOrder(h int64, fees *int64) (ops []any, events []abci.Event, err error) {
	p := g.pickPerp()
	taker := g.st.traders[g.st.active[g.rng.IntN(len(g.st.active))]]
	liquidation := false
	if h >= g.p.LiquidationsFrom && g.rng.IntN(1000) < g.p.LiquidationsPerMille {
		// The liquidated subaccount is one of the recent takers whose
		// position is still open.
		if r := g.recent[g.rng.IntN(len(g.recent))]; r.a != nil && r.a.pos[r.perp.id] != 0 {
			taker, p, liquidation = r.a, r.perp, true
		}
	}
	held := taker.pos[p.id]
	var isBuy bool
	var steps int64
	if liquidation {
		// The liquidated subaccount is the taker, and the fill reduces
		// its position: part or all of it.
		isBuy = held < 0
		open := abs(held) / p.step
		steps = max(1, open/int64(1+g.rng.IntN(2)))
	} else {
		// $20 to $50,000 of notional, log-uniform.
		usd := math.Exp(math.Log(20) + g.rng.Float64()*(math.Log(50_000)-math.Log(20)))
		human := float64(p.price) * math.Pow10(p.exp)
		base := usd / human * math.Pow10(-p.ar)
		steps = max(1, int64(base/float64(p.step)))
		isBuy = g.rng.IntN(2) == 0
		// Keep positions within $2M: an order that would grow one past
		// it goes the other way.
		limit := int64(2_000_000 / human * math.Pow10(-p.ar))
		if (isBuy && held+steps*p.step > limit) || (!isBuy && held-steps*p.step < -limit) {
			isBuy = !isBuy
		}
	}
	oracle := g.oracleSubticks(p)
	makers := min(int64(1+g.rng.IntN(4)), steps)
	side, makerSide := "SIDE_SELL", "SIDE_BUY"
	sign := int64(-1)
	if isBuy {
		side, makerSide, sign = "SIDE_BUY", "SIDE_SELL", 1
	}
	var fills []any
	var fillEvents []abci.Event
	left := steps
	limitSub := oracle
	for j := range makers {
		fillSteps := left / (makers - j)
		if j < makers-1 {
			fillSteps = max(1, fillSteps+int64(g.rng.IntN(int(fillSteps)+1))-fillSteps/2)
			fillSteps = min(fillSteps, left-(makers-1-j))
		} else {
			fillSteps = left
		}
		left -= fillSteps
		fill := fillSteps * p.step
		// Makers rest one tick apart away from the oracle price; the
		// taker crosses them all.
		sub := oracle + sign*j*p.spt
		if sub < p.spt {
			sub = p.spt
		}
		limitSub = sub
		maker := g.st.makers[g.rng.IntN(len(g.st.makers))]
		maker.client++
		placement, err := g.placement(maker, maker.client, p, makerSide, fill+int64(g.rng.IntN(3))*p.step, sub, h, "TIME_IN_FORCE_UNSPECIFIED")
		if err != nil {
			return nil, nil, err
		}
		ops = append(ops, map[string]any{"short_term_order_placement": b64(placement)})
		events = append(events, placementEvents(maker, placement)...)
		fills = append(fills, map[string]any{"fill_amount": itoa(fill), "maker_order_id": orderID(maker, maker.client, p.id)})
		fillEvents = append(fillEvents, g.fill(taker, maker, p, sub, fill, sign, liquidation, fees)...)
	}
	taker.client++
	g.recent[g.nextRecent%len(g.recent)] = recentTaker{taker, p}
	g.nextRecent++
	if liquidation {
		ops = append(ops, map[string]any{"match": map[string]any{"match_perpetual_liquidation": map[string]any{
			"liquidated": subaccountID(taker), "clob_pair_id": p.id, "perpetual_id": p.id,
			"total_size": itoa(steps * p.step), "is_buy": isBuy, "fills": fills}}})
		return ops, append(events, fillEvents...), nil
	}
	placement, err := g.placement(taker, taker.client, p, side, steps*p.step, limitSub, h, "TIME_IN_FORCE_IOC")
	if err != nil {
		return nil, nil, err
	}
	ops = append(ops, map[string]any{"short_term_order_placement": b64(placement)},
		map[string]any{"match": map[string]any{"match_orders": map[string]any{
			"taker_order_id": orderID(taker, taker.client, p.id), "fills": fills}}})
	events = append(events, placementEvents(taker, placement)...)
	return ops, append(events, fillEvents...), nil
}

// recentTaker is a taker and the perpetual it traded, a candidate for a
// later liquidation.
type recentTaker struct {
	a    *account
	perp *perp
}

// placement is the signed MsgPlaceOrder tx of a short-term order, as
// MsgProposedOperations embeds it.
func (g *generator) placement(a *account, client uint32, p *perp, side string, quantums, subticks, h int64, tif string) ([]byte, error) {
	m, err := g.anyOf(msgPlaceOrder, map[string]any{"order": map[string]any{
		"order_id": orderID(a, client, p.id), "side": side, "quantums": itoa(quantums), "subticks": itoa(subticks),
		"good_til_block": h + 20, "time_in_force": tif,
	}})
	if err != nil {
		return nil, err
	}
	return g.txBytes(m, a, 200_000, 0)
}

// placementEvents are the tx events the chain emits for an embedded
// placement's signer: its sequence and the placement's signature (the last
// 64 bytes of the TxRaw, its only signature).
func placementEvents(a *account, placement []byte) []abci.Event {
	return []abci.Event{
		event("tx", "acc_seq", a.addr+"/"+itoa(int64(a.seq)), "msg_index", "0"),
		event("tx", "signature", b64(placement[len(placement)-64:]), "msg_index", "0"),
	}
}

// fill applies one fill to the taker and maker and returns its events: the
// net fees to the fee collector and a liquidation's fee to the insurance
// fund (bank sends out of the subaccounts module), then the match.
func (g *generator) fill(taker, maker *account, p *perp, subticks, base, sign int64, liquidation bool, fees *int64) []abci.Event {
	n := notional(subticks, base, p.qce)
	var takerFee, makerFee, insurance int64
	if liquidation {
		insurance = mulPPM(n, liquidationFeePPM)
	} else {
		takerFee = ceilPPM(n, takerFeePPM)
		makerFee = mulPPM(n, makerFeePPM)
	}
	takerQuote := -sign*n - takerFee - insurance
	makerQuote := sign*n - makerFee
	taker.quote += takerQuote
	maker.quote += makerQuote
	taker.pos[p.id] += sign * base
	maker.pos[p.id] -= sign * base
	var out []abci.Event
	if net := takerFee + makerFee; net > 0 {
		out = append(out, bankSend(g.st.subaccounts, g.st.feeCollector, usdc(net), "msg_index", "0")...)
		*fees += net
	}
	if insurance > 0 {
		out = append(out, bankSend(g.st.subaccounts, g.st.insurance, usdc(insurance), "msg_index", "0")...)
	}
	bools := map[bool]string{true: "true", false: "false"}
	return append(out, event("match",
		"taker_subaccount", taker.addr, "taker_subaccount_number", "0",
		"maker_subaccount", maker.addr, "maker_subaccount_number", "0",
		"taker_order_fee_quote_quantums", itoa(takerFee), "maker_order_fee_quote_quantums", itoa(makerFee),
		"taker_quote_balance_delta_quote_quantums", itoa(takerQuote), "maker_quote_balance_delta_quote_quantums", itoa(makerQuote),
		"taker_perpetual_quantums_delta_base_quantums", itoa(sign*base), "maker_perpetual_quantums_delta_base_quantums", itoa(-sign*base),
		"insurance_fund_delta_quote_quantums", itoa(insurance),
		"is_liquidation", bools[liquidation], "is_deleverage", "false", "perpetual_id", itoa(int64(p.id)),
		"taker_builder_address", "", "maker_builder_address", "", "taker_builder_fee_quantums", "0", "maker_builder_fee_quantums", "0",
		"taker_order_router_address", "", "maker_order_router_address", "",
		"taker_order_router_fee_quote_quantums", "0", "maker_order_router_fee_quote_quantums", "0",
		"msg_index", "0"))
}

// pickPerp draws a perpetual by its share of the taker orders.
func (g *generator) pickPerp() *perp {
	total := 0
	for _, p := range g.st.perps {
		total += p.weight
	}
	r := g.rng.IntN(total)
	for i := range g.st.perps {
		if r < g.st.perps[i].weight {
			return &g.st.perps[i]
		}
		r -= g.st.perps[i].weight
	}
	return &g.st.perps[0]
}

// oracleSubticks is the market's oracle price in subticks, on its tick:
// subticks = price × 10^(exponent + 6 + atomic resolution − qce).
func (g *generator) oracleSubticks(p *perp) int64 {
	e := p.exp + 6 + p.ar - p.qce
	v := new(big.Int).SetInt64(p.price)
	if e >= 0 {
		v.Mul(v, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(e)), nil))
	} else {
		v.Quo(v, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-e)), nil))
	}
	s := v.Int64() / p.spt * p.spt
	return max(s, p.spt)
}

// mulPPM is n × ppm / 10^6, rounded toward zero.
func mulPPM(n, ppm int64) int64 {
	return new(big.Int).Quo(new(big.Int).Mul(big.NewInt(n), big.NewInt(ppm)), big.NewInt(1_000_000)).Int64()
}

// ceilPPM is n × ppm / 10^6 rounded up (n, ppm ≥ 0).
func ceilPPM(n, ppm int64) int64 {
	q, r := new(big.Int).QuoRem(new(big.Int).Mul(big.NewInt(n), big.NewInt(ppm)), big.NewInt(1_000_000), new(big.Int))
	if r.Sign() > 0 {
		q.Add(q, big.NewInt(1))
	}
	return q.Int64()
}

func abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}
