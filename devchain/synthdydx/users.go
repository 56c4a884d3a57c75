package synthdydx

import (
	"github.com/chainlens/chainlens/devchain/synthcomet"
	abci "github.com/cometbft/cometbft/abci/types"
)

// Opening deposits: every maker at height 1, then openingDeposits traders
// a block for the first openingBlocks heights, so that trading has
// counterparties from the start.
const (
	openingDeposits = 20
	openingBlocks   = 200
	userGas         = 400_000
)

// userTxs adds the block's signed user txs: deposits into subaccounts,
// withdrawals out of them and transfers between them, each paying a fee
// in USDC to the fee collector.
func (g *generator) userTxs(h int64, b *synthcomet.Builder, fees *int64) error {
	if h == 1 {
		for _, m := range g.st.makers {
			if err := g.deposit(b, m, m.bank/2, fees); err != nil {
				return err
			}
		}
	}
	deposits := synthcomet.Poisson(g.rng, g.p.perBlock(g.p.DepositsPerDay))
	if h <= openingBlocks {
		deposits += openingDeposits
	}
	for range deposits {
		var a *account
		if g.nextDepositor < len(g.st.traders) {
			g.st.active = append(g.st.active, g.nextDepositor)
			a = g.st.traders[g.nextDepositor]
			g.nextDepositor++
		} else {
			a = g.st.traders[g.st.active[g.rng.IntN(len(g.st.active))]]
		}
		amount := (a.bank - userFee) * int64(20+g.rng.IntN(41)) / 100
		if amount <= 0 {
			continue
		}
		if err := g.deposit(b, a, amount, fees); err != nil {
			return err
		}
	}
	if len(g.st.active) == 0 {
		return nil
	}
	for range synthcomet.Poisson(g.rng, g.p.perBlock(g.p.WithdrawalsPerDay)) {
		a := g.st.traders[g.st.active[g.rng.IntN(len(g.st.active))]]
		amount := a.quote * int64(10+g.rng.IntN(41)) / 100
		if amount <= 0 || a.bank < userFee {
			continue
		}
		if err := g.withdraw(b, a, amount, fees); err != nil {
			return err
		}
	}
	for range synthcomet.Poisson(g.rng, g.p.perBlock(g.p.TransfersPerDay)) {
		from := g.st.traders[g.st.active[g.rng.IntN(len(g.st.active))]]
		to := g.st.traders[g.st.active[g.rng.IntN(len(g.st.active))]]
		amount := from.quote * int64(5+g.rng.IntN(21)) / 100
		if amount <= 0 || from == to || from.bank < userFee {
			continue
		}
		if err := g.transfer(b, from, to, amount, fees); err != nil {
			return err
		}
	}
	return nil
}

// userTx signs and adds one user tx; events follow its fee payment and
// message events, as the SDK emits them.
func (g *generator) userTx(b *synthcomet.Builder, a *account, typeURL, module string, msg map[string]any, fees *int64, events []abci.Event) error {
	m, err := g.anyOf(typeURL, msg)
	if err != nil {
		return err
	}
	tx, err := g.txBytes(m, a, userGas, userFee)
	if err != nil {
		return err
	}
	all := bankSend(a.addr, g.st.feeCollector, usdc(userFee))
	all = append(all,
		event("tx", "fee", usdc(userFee), "fee_payer", a.addr),
		event("tx", "acc_seq", a.addr+"/"+itoa(int64(a.seq))),
		event("tx", "signature", b64(tx[len(tx)-64:])),
		event("message", "action", typeURL, "sender", a.addr, "module", module, "msg_index", "0"))
	all = append(all, events...)
	a.seq++
	a.bank -= userFee
	*fees += userFee
	b.Add(tx, &abci.ExecTxResult{Data: synthcomet.MsgData(typeURL), GasWanted: userGas, GasUsed: int64(90_000 + g.rng.IntN(60_000)), Events: all})
	return nil
}

// deposit moves amount of a's bank USDC into its subaccount 0.
func (g *generator) deposit(b *synthcomet.Builder, a *account, amount int64, fees *int64) error {
	ev := append(bankSend(a.addr, g.st.subaccounts, usdc(amount), "msg_index", "0"),
		event("deposit_to_subaccount", "sender", a.addr, "recipient", a.addr, "recipient_number", "0", "asset_id", "0",
			"quantums", itoa(amount), "msg_index", "0"))
	if err := g.userTx(b, a, msgDeposit, "sending", map[string]any{"sender": a.addr, "recipient": subaccountID(a),
		"asset_id": 0, "quantums": itoa(amount)}, fees, ev); err != nil {
		return err
	}
	a.bank -= amount
	a.quote += amount
	return nil
}

// withdraw moves amount of a's subaccount 0 quote balance to its bank.
func (g *generator) withdraw(b *synthcomet.Builder, a *account, amount int64, fees *int64) error {
	ev := append(bankSend(g.st.subaccounts, a.addr, usdc(amount), "msg_index", "0"),
		event("withdraw_from_subaccount", "sender", a.addr, "sender_number", "0", "recipient", a.addr, "asset_id", "0",
			"quantums", itoa(amount), "msg_index", "0"))
	if err := g.userTx(b, a, msgWithdraw, "sending", map[string]any{"sender": subaccountID(a), "recipient": a.addr,
		"asset_id": 0, "quantums": itoa(amount)}, fees, ev); err != nil {
		return err
	}
	a.quote -= amount
	a.bank += amount
	return nil
}

// transfer moves amount of quote balance between two subaccounts (no bank
// movement: both are held by the subaccounts module).
func (g *generator) transfer(b *synthcomet.Builder, from, to *account, amount int64, fees *int64) error {
	ev := []abci.Event{event("create_transfer", "sender", from.addr, "sender_number", "0", "recipient", to.addr,
		"recipient_number", "0", "asset_id", "0", "quantums", itoa(amount), "msg_index", "0")}
	if err := g.userTx(b, from, msgCreateTransfer, "sending", map[string]any{"transfer": map[string]any{
		"sender": subaccountID(from), "recipient": subaccountID(to), "asset_id": 0, "amount": itoa(amount)}}, fees, ev); err != nil {
		return err
	}
	from.quote -= amount
	to.quote += amount
	return nil
}
