package smartaccounts

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

func uxion(n string) coins {
	c, _ := parseCoins(json.RawMessage(`[{"denom":"uxion","amount":"` + n + `"}]`))
	return c
}

// TestPayFee follows the feegrant keeper: limits go down, a spent limit
// removes the grant, a period resets after its end (one period later, or
// a period from the block time when more than one passed).
func TestPayFee(t *testing.T) {
	at := time.Date(2026, 11, 21, 22, 0, 0, 0, time.UTC)
	periodic := `{"@type":"/cosmos.feegrant.v1beta1.PeriodicAllowance","basic":{"expiration":null,"spend_limit":[%s]},"period":"3600s","period_reset":"2026-11-21T22:30:00Z","period_can_spend":[{"denom":"uxion","amount":"10"}],"period_spend_limit":[{"denom":"uxion","amount":"100"}]}`
	tests := []struct {
		name, allowance, fee string
		at                   time.Time
		want                 string
		deleted, overspent   bool
	}{
		{"basic", `{"@type":"/cosmos.feegrant.v1beta1.BasicAllowance","expiration":null,"spend_limit":[{"denom":"uxion","amount":"2000000"}]}`, "7000", at,
			`{"@type":"/cosmos.feegrant.v1beta1.BasicAllowance","expiration":null,"spend_limit":[{"denom":"uxion","amount":"1993000"}]}`, false, false},
		{"basic used up", `{"@type":"/cosmos.feegrant.v1beta1.BasicAllowance","spend_limit":[{"denom":"uxion","amount":"7000"}]}`, "7000", at, "", true, false},
		{"basic without limit", `{"@type":"/cosmos.feegrant.v1beta1.BasicAllowance","spend_limit":[]}`, "7000", at,
			`{"@type":"/cosmos.feegrant.v1beta1.BasicAllowance","spend_limit":[]}`, false, false},
		{"basic overspent", `{"@type":"/cosmos.feegrant.v1beta1.BasicAllowance","spend_limit":[{"denom":"uxion","amount":"5"}]}`, "7", at, "", false, true},
		{"periodic within the period", fmt.Sprintf(periodic, ""), "4", at,
			`{"@type":"/cosmos.feegrant.v1beta1.PeriodicAllowance","basic":{"expiration":null,"spend_limit":[]},"period":"3600s","period_can_spend":[{"denom":"uxion","amount":"6"}],"period_reset":"2026-11-21T22:30:00Z","period_spend_limit":[{"denom":"uxion","amount":"100"}]}`, false, false},
		{"periodic over the period's rest", fmt.Sprintf(periodic, ""), "11", at, "", false, true},
		{"periodic, next period", fmt.Sprintf(periodic, ""), "11", at.Add(45 * time.Minute),
			`{"@type":"/cosmos.feegrant.v1beta1.PeriodicAllowance","basic":{"expiration":null,"spend_limit":[]},"period":"3600s","period_can_spend":[{"denom":"uxion","amount":"89"}],"period_reset":"2026-11-21T23:30:00Z","period_spend_limit":[{"denom":"uxion","amount":"100"}]}`, false, false},
		{"periodic, periods later", fmt.Sprintf(periodic, ""), "1", at.Add(5 * time.Hour),
			`{"@type":"/cosmos.feegrant.v1beta1.PeriodicAllowance","basic":{"expiration":null,"spend_limit":[]},"period":"3600s","period_can_spend":[{"denom":"uxion","amount":"99"}],"period_reset":"2026-11-22T04:00:00Z","period_spend_limit":[{"denom":"uxion","amount":"100"}]}`, false, false},
		{"periodic total below the period limit", fmt.Sprintf(periodic, `{"denom":"uxion","amount":"50"}`), "1", at.Add(45 * time.Minute),
			`{"@type":"/cosmos.feegrant.v1beta1.PeriodicAllowance","basic":{"expiration":null,"spend_limit":[{"denom":"uxion","amount":"49"}]},"period":"3600s","period_can_spend":[{"denom":"uxion","amount":"49"}],"period_reset":"2026-11-21T23:30:00Z","period_spend_limit":[{"denom":"uxion","amount":"100"}]}`, false, false},
		{"allowed messages", `{"@type":"/cosmos.feegrant.v1beta1.AllowedMsgAllowance","allowance":{"@type":"/cosmos.feegrant.v1beta1.BasicAllowance","spend_limit":[{"denom":"uxion","amount":"9"}]},"allowed_messages":["/cosmos.bank.v1beta1.MsgSend"]}`, "2", at,
			`{"@type":"/cosmos.feegrant.v1beta1.AllowedMsgAllowance","allowance":{"@type":"/cosmos.feegrant.v1beta1.BasicAllowance","spend_limit":[{"denom":"uxion","amount":"7"}]},"allowed_messages":["/cosmos.bank.v1beta1.MsgSend"]}`, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, deleted, err := PayFee(json.RawMessage(tt.allowance), uxion(tt.fee), tt.at)
			if tt.overspent {
				if err == nil {
					t.Fatalf("no overspend error: %s", got)
				}
				return
			}
			if err != nil || deleted != tt.deleted {
				t.Fatalf("deleted %v, err %v", deleted, err)
			}
			if !tt.deleted && !sameJSON(t, got, tt.want) {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestSpend(t *testing.T) {
	send := `{"@type":"/cosmos.bank.v1beta1.SendAuthorization","allow_list":[],"spend_limit":[{"denom":"uxion","amount":"5000000"}]}`
	got, deleted, err := Spend(json.RawMessage(send), uxion("777000"))
	if err != nil || deleted || !sameJSON(t, got, `{"@type":"/cosmos.bank.v1beta1.SendAuthorization","allow_list":[],"spend_limit":[{"denom":"uxion","amount":"4223000"}]}`) {
		t.Errorf("send: %s %v %v", got, deleted, err)
	}
	if _, deleted, err := Spend(json.RawMessage(send), uxion("5000000")); !deleted || err != nil {
		t.Errorf("used up: %v %v", deleted, err)
	}
	stake := `{"@type":"/cosmos.staking.v1beta1.StakeAuthorization","max_tokens":{"denom":"uxion","amount":"10"},"authorization_type":"AUTHORIZATION_TYPE_DELEGATE"}`
	got, deleted, err = Spend(json.RawMessage(stake), uxion("4"))
	if err != nil || deleted || !sameJSON(t, got, `{"@type":"/cosmos.staking.v1beta1.StakeAuthorization","max_tokens":{"denom":"uxion","amount":"6"},"authorization_type":"AUTHORIZATION_TYPE_DELEGATE"}`) {
		t.Errorf("stake: %s %v %v", got, deleted, err)
	}
	generic := `{"@type":"/cosmos.authz.v1beta1.GenericAuthorization","msg":"/cosmos.bank.v1beta1.MsgSend"}`
	if got, deleted, err := Spend(json.RawMessage(generic), uxion("4")); err != nil || deleted || string(got) != generic {
		t.Errorf("generic: %s %v %v", got, deleted, err)
	}
}

func TestMsgTypeURL(t *testing.T) {
	for in, want := range map[string]string{
		`{"@type":"/cosmos.authz.v1beta1.GenericAuthorization","msg":"/cosmos.gov.v1beta1.MsgVote"}`:                  "/cosmos.gov.v1beta1.MsgVote",
		`{"@type":"/cosmos.bank.v1beta1.SendAuthorization"}`:                                                          "/cosmos.bank.v1beta1.MsgSend",
		`{"@type":"/cosmos.staking.v1beta1.StakeAuthorization","authorization_type":"AUTHORIZATION_TYPE_REDELEGATE"}`: "/cosmos.staking.v1beta1.MsgBeginRedelegate",
		`{"@type":"/cosmos.staking.v1beta1.StakeAuthorization","authorization_type":"AUTHORIZATION_TYPE_UNDELEGATE"}`: "/cosmos.staking.v1beta1.MsgUndelegate",
	} {
		if got, err := MsgTypeURL(json.RawMessage(in)); got != want || err != nil {
			t.Errorf("%s: %q %v", in, got, err)
		}
	}
	if _, err := MsgTypeURL(json.RawMessage(`{"@type":"/x.Unknown"}`)); err == nil {
		t.Error("unknown authorization accepted")
	}
}

func sameJSON(t *testing.T, a json.RawMessage, b string) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(b), &y); err != nil {
		t.Fatal(err)
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return string(xb) == string(yb)
}
