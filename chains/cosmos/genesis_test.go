package cosmos

import (
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/cosmos/cosmos-sdk/types/bech32"

	"github.com/chainlens/chainlens/chains"
)

// TestGenesisRowsGentxs: bank balances, then per gentx its fee to the fee
// collector and its self-delegation to the bonded pool when the validator
// is in the active set at genesis (the top max_validators by tokens with at
// least one unit of power), else to the not-bonded pool.
func TestGenesisRowsGentxs(t *testing.T) {
	bonded, _ := ModuleAddress("cosmos", bondedPoolName)
	notBonded, _ := ModuleAddress("cosmos", notBondedPoolName)
	collector, _ := ModuleAddress("cosmos", feeCollectorName)
	gentx := func(del, val, amount, fee string) string {
		fees := "[]"
		if fee != "" {
			fees = `[{"denom":"uatom","amount":"` + fee + `"}]`
		}
		return fmt.Sprintf(`{"body":{"messages":[{"@type":"/cosmos.staking.v1beta1.MsgCreateValidator","delegator_address":%q,"validator_address":%q,
			"value":{"denom":"uatom","amount":%q}}]},"auth_info":{"fee":{"amount":%s,"payer":""}}}`, del, val, amount, fees)
	}
	addr := func(prefix string, b byte) string {
		bz := make([]byte, 20)
		for i := range bz {
			bz[i] = b
		}
		s, err := bech32.ConvertAndEncode(prefix, bz)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	// a and c name themselves as delegators; b's gentx leaves it empty (SDK
	// 0.50): its operator's account delegates.
	a, b, c := addr("cosmos", 1), addr("cosmos", 2), addr("cosmos", 3)
	aVal, bVal, cVal := addr("cosmosvaloper", 1), addr("cosmosvaloper", 2), addr("cosmosvaloper", 3)
	app := fmt.Sprintf(`{"bank":{"balances":[{"address":%q,"coins":[{"denom":"uatom","amount":"5000000"}]},{"address":%q,"coins":[{"denom":"uatom","amount":"9000000"},{"denom":"ufoo","amount":"1"}]}]},
		"staking":{"params":{"max_validators":1}},
		"genutil":{"gen_txs":[%s,%s,%s]}}`, a, b,
		gentx(a, aVal, "2000000", "10"),
		gentx("", bVal, "3000000", ""),
		gentx(c, cVal, "999999", ""))
	rows := chains.NewRows()
	if err := NewAdapter("cosmos", "cosmos").GenesisRows(&chains.Genesis{ChainID: "c-1", InitialHeight: 1, AppState: []byte(app)}, rows); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rows.Of("balance_changes") {
		got = append(got, fmt.Sprint(r...))
	}
	want := []string{
		fmt.Sprint("c-1", int64(0), -1, 0, 0, a, "uatom", "5000000"),
		fmt.Sprint("c-1", int64(0), -1, 1, 0, b, "uatom", "9000000"),
		fmt.Sprint("c-1", int64(0), -1, 1, 1, b, "ufoo", "1"),
		fmt.Sprint("c-1", int64(0), -2, 0, 0, a, "uatom", "-10"),
		fmt.Sprint("c-1", int64(0), -2, 1, 0, collector, "uatom", "10"),
		fmt.Sprint("c-1", int64(0), -2, 2, 0, a, "uatom", "-2000000"),
		fmt.Sprint("c-1", int64(0), -2, 3, 0, notBonded, "uatom", "2000000"), // cut by max_validators 1
		fmt.Sprint("c-1", int64(0), -2, 4, 0, b, "uatom", "-3000000"),
		fmt.Sprint("c-1", int64(0), -2, 5, 0, bonded, "uatom", "3000000"), // the most tokens
		fmt.Sprint("c-1", int64(0), -2, 6, 0, c, "uatom", "-999999"),
		fmt.Sprint("c-1", int64(0), -2, 7, 0, notBonded, "uatom", "999999"), // below one unit of power
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("rows\n%v\nwant\n%v", got, want)
	}

	bad := `{"genutil":{"gen_txs":[{"body":{"messages":[{"@type":"/cosmos.bank.v1beta1.MsgSend"}]}}]}}`
	if err := NewAdapter("cosmos", "cosmos").GenesisRows(&chains.Genesis{ChainID: "c-1", AppState: []byte(bad)}, chains.NewRows()); !errors.Is(err, chains.ErrGenesisUnsupported) {
		t.Errorf("unknown gentx message: %v", err)
	}
}
