package devnet

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	coretypes "github.com/cometbft/cometbft/rpc/core/types"
	"github.com/cosmos/cosmos-sdk/client/tx"
	sdk "github.com/cosmos/cosmos-sdk/types"
	"github.com/cosmos/cosmos-sdk/types/tx/signing"
	authtypes "github.com/cosmos/cosmos-sdk/x/auth/types"
	banktypes "github.com/cosmos/cosmos-sdk/x/bank/types"
	distrtypes "github.com/cosmos/cosmos-sdk/x/distribution/types"
	govtypes "github.com/cosmos/cosmos-sdk/x/gov/types"
	govv1 "github.com/cosmos/cosmos-sdk/x/gov/types/v1"
	stakingtypes "github.com/cosmos/cosmos-sdk/x/staking/types"

	sdkmath "cosmossdk.io/math"
)

// Every transaction the devnet sends has this gas limit and pays this fee in
// BondDenom (validators accept 0.000006stake per gas, so 2.4stake at least).
const (
	// TxGasLimit is the gas limit of every transaction.
	TxGasLimit = 400_000
	// TxFee is the fee of every transaction, in BondDenom.
	TxFee = 1_000
)

// Amounts RunTraffic moves, in BondDenom: each bank send and each delegation.
const (
	// TrafficSendAmount is the amount of each RunTraffic bank send.
	TrafficSendAmount = 1_000
	// TrafficDelegateAmount is the amount of each RunTraffic delegation.
	TrafficDelegateAmount = 100
)

// Send transfers amount from the key from to the account to (each a key name
// from Accounts or a bech32 address; from must be in the keyring). It returns
// once the transaction is in a block: its hash (upper-case hex) and height.
// A transaction rejected by CheckTx or failed in its block is an error naming
// the code and log; in the latter case hash and height are returned too.
func (n *Net) Send(ctx context.Context, from, to string, amount sdk.Coins) (txHash string, height int64, err error) {
	name, fromAddr, err := n.signer(from)
	if err != nil {
		return "", 0, err
	}
	toAddr, err := n.accAddress(to)
	if err != nil {
		return "", 0, err
	}
	return n.broadcast(ctx, "send", name, fromAddr, banktypes.NewMsgSend(fromAddr, toAddr, amount))
}

// Delegate bonds amount from delegator (a key name or address in the
// keyring) to the validator valoper; results as for Send.
func (n *Net) Delegate(ctx context.Context, delegator, valoper string, amount sdk.Coin) (txHash string, height int64, err error) {
	name, addr, err := n.signer(delegator)
	if err != nil {
		return "", 0, err
	}
	if _, err := sdk.ValAddressFromBech32(valoper); err != nil {
		return "", 0, fmt.Errorf("devnet: validator %q: %w", valoper, err)
	}
	return n.broadcast(ctx, "delegate", name, addr, stakingtypes.NewMsgDelegate(addr.String(), valoper, amount))
}

// WithdrawRewards withdraws delegator's rewards from the validator valoper;
// results as for Send.
func (n *Net) WithdrawRewards(ctx context.Context, delegator, valoper string) (txHash string, height int64, err error) {
	name, addr, err := n.signer(delegator)
	if err != nil {
		return "", 0, err
	}
	if _, err := sdk.ValAddressFromBech32(valoper); err != nil {
		return "", 0, fmt.Errorf("devnet: validator %q: %w", valoper, err)
	}
	return n.broadcast(ctx, "withdraw rewards", name, addr, distrtypes.NewMsgWithdrawDelegatorReward(addr.String(), valoper))
}

// RunTraffic sends a fixed cycle of transactions, one every interval (default
// BlockTime), until ctx ends: a bank send of TrafficSendAmount from each user
// to the next (user0→user1, user1→user2, user2→user0), a delegation of
// TrafficDelegateAmount from user0 to the first validator, and a withdrawal
// of user0's rewards from it. Each waits for its block. It returns nil when
// ctx ends and an error when a transaction fails.
func (n *Net) RunTraffic(ctx context.Context, every time.Duration) error {
	if every <= 0 {
		every = n.blockTime
	}
	var users []string
	for _, a := range n.accounts {
		if strings.HasPrefix(a.Name, "user") {
			users = append(users, a.Name)
		}
	}
	if len(users) < 2 || len(n.valopers) == 0 {
		return errors.New("devnet: traffic needs two users and a validator")
	}
	val := n.valopers[0]
	send := sdk.NewCoins(sdk.NewCoin(BondDenom, sdkmath.NewInt(TrafficSendAmount)))
	bond := sdk.NewCoin(BondDenom, sdkmath.NewInt(TrafficDelegateAmount))

	t := time.NewTicker(every)
	defer t.Stop()
	for step := 0; ; step++ {
		if ctx.Err() != nil {
			return nil
		}
		var (
			hash string
			h    int64
			err  error
		)
		switch k := step % (len(users) + 2); {
		case k < len(users):
			hash, h, err = n.Send(ctx, users[k], users[(k+1)%len(users)], send)
		case k == len(users):
			hash, h, err = n.Delegate(ctx, users[0], val, bond)
		default:
			hash, h, err = n.WithdrawRewards(ctx, users[0], val)
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("devnet: traffic step %d: %w", step, err)
		}
		n.log.Debug("devnet traffic", "step", step, "tx", hash, "height", h)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// signer resolves a key name or bech32 address to a key of the keyring.
func (n *Net) signer(s string) (string, sdk.AccAddress, error) {
	select {
	case <-n.closed: // the keyring's directory may be gone
		return "", nil, ErrClosed
	default:
	}
	kr := n.val.ClientCtx.Keyring
	rec, err := kr.Key(s)
	if err != nil {
		addr, aerr := sdk.AccAddressFromBech32(s)
		if aerr != nil {
			return "", nil, fmt.Errorf("devnet: signer %q: not a key name (%w) nor an address", s, err)
		}
		if rec, err = kr.KeyByAddress(addr); err != nil {
			return "", nil, fmt.Errorf("devnet: signer %q: %w", s, err)
		}
	}
	addr, err := rec.GetAddress()
	if err != nil {
		return "", nil, fmt.Errorf("devnet: signer %q: %w", s, err)
	}
	return rec.Name, addr, nil
}

// accAddress resolves a key name or bech32 address to an address.
func (n *Net) accAddress(s string) (sdk.AccAddress, error) {
	if addr, err := sdk.AccAddressFromBech32(s); err == nil {
		return addr, nil
	}
	_, addr, err := n.signer(s)
	return addr, err
}

// broadcast signs msgs with the key name, broadcasts them in sync mode and
// waits for the block that includes them.
func (n *Net) broadcast(ctx context.Context, what, name string, addr sdk.AccAddress, msgs ...sdk.Msg) (string, int64, error) {
	n.txMu.Lock()
	defer n.txMu.Unlock()
	select {
	case <-n.closed:
		return "", 0, fmt.Errorf("devnet: %s: %w", what, ErrClosed)
	default:
	}
	cc := n.val.ClientCtx
	num, seq, err := n.accountNumberSequence(ctx, addr)
	if err != nil {
		return "", 0, fmt.Errorf("devnet: %s: %w", what, err)
	}
	txf := tx.Factory{}.
		WithTxConfig(cc.TxConfig).
		WithKeybase(cc.Keyring).
		WithChainID(n.chainID).
		WithAccountNumber(num).
		WithSequence(seq).
		WithGas(TxGasLimit).
		WithFees(fmt.Sprintf("%d%s", TxFee, BondDenom)).
		WithSignMode(signing.SignMode_SIGN_MODE_DIRECT)
	b, err := txf.BuildUnsignedTx(msgs...)
	if err != nil {
		return "", 0, fmt.Errorf("devnet: %s: build: %w", what, err)
	}
	if err := tx.Sign(ctx, txf, name, b, true); err != nil {
		return "", 0, fmt.Errorf("devnet: %s: sign as %s: %w", what, name, err)
	}
	bz, err := cc.TxConfig.TxEncoder()(b.GetTx())
	if err != nil {
		return "", 0, fmt.Errorf("devnet: %s: encode: %w", what, err)
	}
	res, err := n.val.RPCClient.BroadcastTxSync(ctx, bz)
	if err != nil {
		return "", 0, fmt.Errorf("devnet: %s: broadcast: %w", what, err)
	}
	hash := res.Hash.String()
	if res.Code != 0 {
		return "", 0, fmt.Errorf("devnet: %s: tx %s rejected by CheckTx: code %d (codespace %q): %s",
			what, hash, res.Code, res.Codespace, res.Log)
	}
	r, err := n.waitForTx(ctx, res.Hash)
	if err != nil {
		return hash, 0, fmt.Errorf("devnet: %s: tx %s: %w", what, hash, err)
	}
	if r.TxResult.Code != 0 {
		return hash, r.Height, fmt.Errorf("devnet: %s: tx %s failed in block %d: code %d (codespace %q): %s",
			what, hash, r.Height, r.TxResult.Code, r.TxResult.Codespace, r.TxResult.Log)
	}
	n.log.Debug("devnet tx", "kind", what, "signer", name, "tx", hash, "height", r.Height, "gas_used", r.TxResult.GasUsed)
	return hash, r.Height, nil
}

// accountNumberSequence queries addr's account at the latest height. Every
// transaction waits for its block, so the committed sequence is current.
func (n *Net) accountNumberSequence(ctx context.Context, addr sdk.AccAddress) (uint64, uint64, error) {
	cc := n.val.ClientCtx
	res, err := authtypes.NewQueryClient(cc).Account(ctx, &authtypes.QueryAccountRequest{Address: addr.String()})
	if err != nil {
		return 0, 0, fmt.Errorf("query account %s: %w", addr, err)
	}
	var acc sdk.AccountI
	if err := cc.InterfaceRegistry.UnpackAny(res.Account, &acc); err != nil {
		return 0, 0, fmt.Errorf("decode account %s: %w", addr, err)
	}
	return acc.GetAccountNumber(), acc.GetSequence(), nil
}

// waitForTx polls the tx index until the transaction is found, giving up
// after max(30 s, 50 blocks) even if ctx has no deadline.
func (n *Net) waitForTx(ctx context.Context, hash []byte) (*coretypes.ResultTx, error) {
	ctx, cancel := context.WithTimeout(ctx, max(30*time.Second, 50*n.blockTime))
	defer cancel()
	t := time.NewTicker(n.pollInterval())
	defer t.Stop()
	for {
		r, err := n.val.RPCClient.Tx(ctx, hash, false)
		if err == nil {
			return r, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("not included (last lookup: %v): %w", err, ctx.Err())
		case <-n.closed:
			return nil, ErrClosed
		case <-t.C:
		}
	}
}

// FundCommunityPool sends amount from the sender (a key name or address in
// the keyring) to the distribution module's community pool; results as for
// Send.
func (n *Net) FundCommunityPool(ctx context.Context, from string, amount sdk.Coins) (txHash string, height int64, err error) {
	name, addr, err := n.signer(from)
	if err != nil {
		return "", 0, err
	}
	return n.broadcast(ctx, "fund community pool", name, addr, distrtypes.NewMsgFundCommunityPool(amount, addr.String()))
}

// ProposeCommunityPoolSpend submits a governance proposal, deposited with
// GovMinDeposit by proposer, to pay amount from the community pool to each
// recipient; it returns the proposal id and the submission's tx hash and
// height.
func (n *Net) ProposeCommunityPoolSpend(ctx context.Context, proposer string, amount sdk.Coins, recipients ...string) (id uint64, txHash string, height int64, err error) {
	name, addr, err := n.signer(proposer)
	if err != nil {
		return 0, "", 0, err
	}
	authority := authtypes.NewModuleAddress(govtypes.ModuleName).String()
	var msgs []sdk.Msg
	for _, r := range recipients {
		to, err := n.accAddress(r)
		if err != nil {
			return 0, "", 0, err
		}
		msgs = append(msgs, &distrtypes.MsgCommunityPoolSpend{Authority: authority, Recipient: to.String(), Amount: amount})
	}
	deposit := sdk.NewCoins(sdk.NewCoin(BondDenom, sdkmath.NewInt(GovMinDeposit)))
	prop, err := govv1.NewMsgSubmitProposal(msgs, deposit, addr.String(), "", "Community pool spend", "Pays from the community pool", false)
	if err != nil {
		return 0, "", 0, fmt.Errorf("devnet: proposal: %w", err)
	}
	if txHash, height, err = n.broadcast(ctx, "submit proposal", name, addr, prop); err != nil {
		return 0, txHash, height, err
	}
	res, err := govv1.NewQueryClient(n.val.ClientCtx).Proposals(ctx, &govv1.QueryProposalsRequest{Depositor: addr.String()})
	if err != nil {
		return 0, txHash, height, fmt.Errorf("devnet: query proposals: %w", err)
	}
	for _, p := range res.Proposals {
		id = max(id, p.Id)
	}
	if id == 0 {
		return 0, txHash, height, fmt.Errorf("devnet: proposal of tx %s not found", txHash)
	}
	return id, txHash, height, nil
}

// Vote casts voter's (a key name or address in the keyring) vote on a
// proposal; results as for Send.
func (n *Net) Vote(ctx context.Context, voter string, proposal uint64, option govv1.VoteOption) (txHash string, height int64, err error) {
	name, addr, err := n.signer(voter)
	if err != nil {
		return "", 0, err
	}
	return n.broadcast(ctx, "vote", name, addr, govv1.NewMsgVote(addr, proposal, option, ""))
}
