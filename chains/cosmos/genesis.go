package cosmos

import (
	"encoding/json"
	"fmt"
	"sort"

	"cosmossdk.io/math"
	"github.com/cosmos/cosmos-sdk/types/address"
	"github.com/cosmos/cosmos-sdk/types/bech32"

	"github.com/chainlens/chainlens/chains"
)

// Rows of the state at genesis in balance_changes (height
// chains.GenesisHeight) are told apart by tx_index.
const (
	// GenesisBalanceTx marks the balances of the bank genesis: event_index
	// is the account's position in bank.balances, coin_index the coin's.
	GenesisBalanceTx = -1
	// GenesisInitChainTx marks what InitChain moves without events (gentx
	// fees and self-delegations, module mints): event_index numbers the
	// rows in order, coin_index is 0.
	GenesisInitChainTx = -2
	// StateImportTx marks the balances of the state imported at the height
	// before the first indexed one, for a chain not indexed from its
	// initial height: event_index numbers them, coin_index is 0.
	StateImportTx = -3
)

// Module account names of the staking pools (x/staking types).
const (
	bondedPoolName    = "bonded_tokens_pool"
	notBondedPoolName = "not_bonded_tokens_pool"
	feeCollectorName  = "fee_collector"
)

// defaultPowerReduction is the tokens of one unit of consensus power
// (sdk.DefaultPowerReduction): a validator with less is not bonded.
var defaultPowerReduction = math.NewInt(1_000_000)

var _ chains.GenesisAdapter = (*Adapter)(nil)

// GenesisTables lists the tables GenesisRows writes.
func (a *Adapter) GenesisTables() []chains.Table { return []chains.Table{balanceTable, stakingTable} }

// GenesisRows appends the balances at genesis as balance_changes rows at
// chains.GenesisHeight: every bank genesis balance, then the coins the
// gentxs move in InitChain, which emits no events: each gentx's fee (payer
// to the fee collector) and its MsgCreateValidator self-delegation (the
// delegator's coins to the bonded pool when the validator enters the
// active set at genesis, the top max_validators by tokens with at least one
// unit of consensus power, else to the not-bonded pool).
func (a *Adapter) GenesisRows(g *chains.Genesis, out *chains.Rows) error {
	gb := NewGenesisBalances(g.ChainID)
	if err := gb.Bank(g.AppState); err != nil {
		return err
	}
	if err := gb.GenTxs(g.AppState, a.prefix); err != nil {
		return err
	}
	gb.AppendTo(out)
	return nil
}

// GenesisBalances builds the balance_changes rows of the state at genesis,
// and the staking_events rows of its gentx validators.
type GenesisBalances struct {
	chainID string
	rows    [][]any
	staking [][]any
	seq     int // event_index of the next InitChain row
}

// NewGenesisBalances starts the rows of a chain's genesis.
func NewGenesisBalances(chainID string) *GenesisBalances { return &GenesisBalances{chainID: chainID} }

// AppendTo appends the rows built so far to out.
func (gb *GenesisBalances) AppendTo(out *chains.Rows) {
	for _, r := range gb.rows {
		out.Add(balanceTable.Name, r...)
	}
	for _, r := range gb.staking {
		out.Add(stakingTable.Name, r...)
	}
}

// Move records an InitChain movement without events: amount of denom from
// one address to another ("" for a mint or a burn).
func (gb *GenesisBalances) Move(from, to, denom string, amount math.Int) {
	if from != "" {
		gb.rows = append(gb.rows, []any{gb.chainID, int64(chains.GenesisHeight), GenesisInitChainTx, gb.seq, 0, from, denom, amount.Neg().String()})
		gb.seq++
	}
	if to != "" {
		gb.rows = append(gb.rows, []any{gb.chainID, int64(chains.GenesisHeight), GenesisInitChainTx, gb.seq, 0, to, denom, amount.String()})
		gb.seq++
	}
}

type genesisCoin struct {
	Denom  string `json:"denom"`
	Amount string `json:"amount"`
}

// Bank appends the bank genesis balances (app_state.bank.balances).
func (gb *GenesisBalances) Bank(appState json.RawMessage) error {
	var st struct {
		Bank struct {
			Balances []struct {
				Address string        `json:"address"`
				Coins   []genesisCoin `json:"coins"`
			} `json:"balances"`
		} `json:"bank"`
	}
	if err := json.Unmarshal(appState, &st); err != nil {
		return fmt.Errorf("genesis bank balances: %w", err)
	}
	for i, b := range st.Bank.Balances {
		for j, c := range b.Coins {
			amt, ok := math.NewIntFromString(c.Amount)
			if !ok || amt.IsNegative() {
				return fmt.Errorf("genesis bank balance of %s: bad amount %q", b.Address, c.Amount)
			}
			gb.rows = append(gb.rows, []any{gb.chainID, int64(chains.GenesisHeight), GenesisBalanceTx, i, j, b.Address, c.Denom, amt.String()})
		}
	}
	return nil
}

// GenTxs appends the movements of the gentxs (app_state.genutil.gen_txs):
// fees to the fee collector and self-delegations to the staking pools, and
// each gentx validator's creation with its self-delegation.
func (gb *GenesisBalances) GenTxs(appState json.RawMessage, prefix string) error {
	var st struct {
		Genutil struct {
			GenTxs []struct {
				Body struct {
					Messages []struct {
						Type             string      `json:"@type"`
						DelegatorAddress string      `json:"delegator_address"`
						ValidatorAddress string      `json:"validator_address"`
						Value            genesisCoin `json:"value"`
					} `json:"messages"`
				} `json:"body"`
				AuthInfo struct {
					Fee struct {
						Amount []genesisCoin `json:"amount"`
						Payer  string        `json:"payer"`
					} `json:"fee"`
				} `json:"auth_info"`
			} `json:"gen_txs"`
		} `json:"genutil"`
		Staking struct {
			Params struct {
				MaxValidators int `json:"max_validators"`
			} `json:"params"`
		} `json:"staking"`
	}
	if err := json.Unmarshal(appState, &st); err != nil {
		return fmt.Errorf("genesis gentxs: %w", err)
	}
	type selfDelegation struct {
		delegator, validator, denom string
		amount                      math.Int
	}
	var dels []selfDelegation
	for i, tx := range st.Genutil.GenTxs {
		var firstSigner string
		for _, m := range tx.Body.Messages {
			if m.Type != "/cosmos.staking.v1beta1.MsgCreateValidator" {
				return fmt.Errorf("%w: gentx %d: message %s: only MsgCreateValidator is known", chains.ErrGenesisUnsupported, i, m.Type)
			}
			del := m.DelegatorAddress
			if del == "" { // SDK 0.50: the validator's operator account delegates
				_, bz, err := bech32.DecodeAndConvert(m.ValidatorAddress)
				if err != nil {
					return fmt.Errorf("gentx %d: validator address %q: %w", i, m.ValidatorAddress, err)
				}
				if del, err = bech32.ConvertAndEncode(prefix, bz); err != nil {
					return fmt.Errorf("gentx %d: %w", i, err)
				}
			}
			if firstSigner == "" {
				firstSigner = del
			}
			amt, ok := math.NewIntFromString(m.Value.Amount)
			if !ok || !amt.IsPositive() {
				return fmt.Errorf("gentx %d: self-delegation amount %q", i, m.Value.Amount)
			}
			dels = append(dels, selfDelegation{delegator: del, validator: m.ValidatorAddress, denom: m.Value.Denom, amount: amt})
		}
		payer := tx.AuthInfo.Fee.Payer
		if payer == "" {
			payer = firstSigner
		}
		for _, c := range tx.AuthInfo.Fee.Amount {
			amt, ok := math.NewIntFromString(c.Amount)
			if !ok || amt.IsNegative() {
				return fmt.Errorf("gentx %d: fee %q", i, c.Amount)
			}
			if amt.IsPositive() {
				collector, err := ModuleAddress(prefix, feeCollectorName)
				if err != nil {
					return err
				}
				gb.Move(payer, collector, c.Denom, amt)
			}
		}
	}
	// The active set at the end of InitChain: the most tokens first (ties:
	// the order does not change who is bonded unless max_validators cuts
	// between equal stakes, which CometBFT's power index breaks by operator
	// address; not modelled).
	maxVals := st.Staking.Params.MaxValidators
	if maxVals <= 0 {
		maxVals = 100
	}
	order := make([]int, len(dels))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return dels[order[a]].amount.GT(dels[order[b]].amount) })
	bonded := map[int]bool{}
	for rank, i := range order {
		bonded[i] = rank < maxVals && dels[i].amount.GTE(defaultPowerReduction)
	}
	bondedPool, err := ModuleAddress(prefix, bondedPoolName)
	if err != nil {
		return err
	}
	notBondedPool, err := ModuleAddress(prefix, notBondedPoolName)
	if err != nil {
		return err
	}
	for i, d := range dels {
		pool := notBondedPool
		if bonded[i] {
			pool = bondedPool
		}
		gb.Move(d.delegator, pool, d.denom, d.amount)
		// The validator exists from genesis with its self-delegation (as a
		// create_validator event would record it).
		gb.staking = append(gb.staking, []any{gb.chainID, int64(chains.GenesisHeight), GenesisInitChainTx, i, 0, -1, "create_validator",
			d.delegator, d.validator, "", d.denom, d.amount.String()})
	}
	return nil
}

// ModuleAddress is the bech32 account of a module (x/auth NewModuleAddress).
func ModuleAddress(prefix, module string) (string, error) {
	s, err := bech32.ConvertAndEncode(prefix, address.Module(module))
	if err != nil {
		return "", fmt.Errorf("module address %s: %w", module, err)
	}
	return s, nil
}
