package smartaccounts

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"cosmossdk.io/math"
)

// The state changes of x/authz and x/feegrant that the chain makes as it
// executes messages and charges fees, replayed on the proto3 JSON of the
// grants (cosmos-sdk x/authz and x/feegrant keepers: SendAuthorization,
// StakeAuthorization, BasicAllowance, PeriodicAllowance, AllowedMsgAllowance).

// Type URLs.
const (
	sendAuthorization    = "/cosmos.bank.v1beta1.SendAuthorization"
	stakeAuthorization   = "/cosmos.staking.v1beta1.StakeAuthorization"
	genericAuthorization = "/cosmos.authz.v1beta1.GenericAuthorization"
	basicAllowance       = "/cosmos.feegrant.v1beta1.BasicAllowance"
	periodicAllowance    = "/cosmos.feegrant.v1beta1.PeriodicAllowance"
	allowedMsgAllowance  = "/cosmos.feegrant.v1beta1.AllowedMsgAllowance"
)

// errOverspent means a use the chain accepted exceeds the replayed limit:
// the grant predates the indexed range or changed in a way not replayed.
// The grant is left as it is.
var errOverspent = errors.New("overspent")

// coin is a proto3 JSON coin.
type coin struct {
	Denom  string `json:"denom"`
	Amount string `json:"amount"`
}

// coins is a set of amounts by denom.
type coins map[string]math.Int

func parseCoins(raw json.RawMessage) (coins, error) {
	out := coins{}
	if len(raw) == 0 || string(raw) == "null" {
		return out, nil
	}
	var list []coin
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, err
	}
	for _, c := range list {
		n, ok := math.NewIntFromString(c.Amount)
		if !ok {
			return nil, fmt.Errorf("coin amount %q", c.Amount)
		}
		if cur, ok := out[c.Denom]; ok {
			n = cur.Add(n)
		}
		out[c.Denom] = n
	}
	return out, nil
}

func (c coins) clone() coins {
	out := coins{}
	for d, n := range c {
		out[d] = n
	}
	return out
}

// sub subtracts b; ok is false when some denom goes negative.
func (c coins) sub(b coins) (coins, bool) {
	out := c.clone()
	for d, n := range b {
		cur, ok := out[d]
		if !ok {
			cur = math.ZeroInt()
		}
		left := cur.Sub(n)
		if left.IsNegative() {
			return nil, false
		}
		out[d] = left
	}
	return out, true
}

func (c coins) isZero() bool {
	for _, n := range c {
		if !n.IsZero() {
			return false
		}
	}
	return true
}

// json renders the coins sorted by denom, without zero amounts (as
// sdk.Coins are).
func (c coins) json() json.RawMessage {
	list := []coin{}
	for d, n := range c {
		if !n.IsZero() {
			list = append(list, coin{d, n.String()})
		}
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Denom < list[j].Denom })
	b, _ := json.Marshal(list)
	return b
}

// object is a proto3 JSON message.
type object map[string]json.RawMessage

func (o object) str(key string) string {
	var s string
	_ = json.Unmarshal(o[key], &s)
	return s
}

func (o object) obj(key string) (object, error) {
	var out object
	if err := json.Unmarshal(o[key], &out); err != nil || out == nil {
		return nil, fmt.Errorf("%s: not an object", key)
	}
	return out, nil
}

func (o object) set(key string, v any) {
	b, _ := json.Marshal(v)
	o[key] = b
}

// MsgTypeURL is the message type an authorization grants, as authz keys
// its grants.
func MsgTypeURL(auth json.RawMessage) (string, error) {
	var a object
	if err := json.Unmarshal(auth, &a); err != nil {
		return "", fmt.Errorf("authorization: %w", err)
	}
	switch a.str("@type") {
	case genericAuthorization:
		return a.str("msg"), nil
	case sendAuthorization:
		return "/cosmos.bank.v1beta1.MsgSend", nil
	case stakeAuthorization:
		switch a.str("authorization_type") {
		case "AUTHORIZATION_TYPE_DELEGATE":
			return "/cosmos.staking.v1beta1.MsgDelegate", nil
		case "AUTHORIZATION_TYPE_UNDELEGATE":
			return "/cosmos.staking.v1beta1.MsgUndelegate", nil
		case "AUTHORIZATION_TYPE_REDELEGATE":
			return "/cosmos.staking.v1beta1.MsgBeginRedelegate", nil
		case "AUTHORIZATION_TYPE_CANCEL_UNBONDING_DELEGATION":
			return "/cosmos.staking.v1beta1.MsgCancelUnbondingDelegation", nil
		}
		return "", fmt.Errorf("stake authorization type %q", a.str("authorization_type"))
	}
	return "", fmt.Errorf("authorization type %q has no known message type", a.str("@type"))
}

// Signer is the account an inner message of MsgExec acts for (the granter
// of the grant it uses), for the messages whose authorizations change when
// used; "" for the others.
func Signer(msg json.RawMessage) (typeURL, signer string, amount coins, err error) {
	var m object
	if err := json.Unmarshal(msg, &m); err != nil {
		return "", "", nil, err
	}
	typeURL = m.str("@type")
	switch typeURL {
	case "/cosmos.bank.v1beta1.MsgSend":
		amount, err = parseCoins(m["amount"])
		return typeURL, m.str("from_address"), amount, err
	case "/cosmos.staking.v1beta1.MsgDelegate", "/cosmos.staking.v1beta1.MsgUndelegate", "/cosmos.staking.v1beta1.MsgBeginRedelegate",
		"/cosmos.staking.v1beta1.MsgCancelUnbondingDelegation":
		amount, err = parseCoins(json.RawMessage(`[` + string(m["amount"]) + `]`))
		return typeURL, m.str("delegator_address"), amount, err
	}
	return typeURL, "", nil, nil
}

// Spend applies one use of an authorization for amount: the updated
// authorization, or deleted when it is used up.
func Spend(auth json.RawMessage, amount coins) (out json.RawMessage, deleted bool, err error) {
	var a object
	if err := json.Unmarshal(auth, &a); err != nil {
		return nil, false, err
	}
	switch a.str("@type") {
	case sendAuthorization:
		limit, err := parseCoins(a["spend_limit"])
		if err != nil {
			return nil, false, err
		}
		left, ok := limit.sub(amount)
		if !ok {
			return nil, false, fmt.Errorf("send authorization overspent: %w", errOverspent)
		}
		if left.isZero() {
			return nil, true, nil
		}
		a["spend_limit"] = left.json()
	case stakeAuthorization:
		if len(a["max_tokens"]) == 0 || string(a["max_tokens"]) == "null" {
			return auth, false, nil
		}
		limit, err := parseCoins(json.RawMessage(`[` + string(a["max_tokens"]) + `]`))
		if err != nil {
			return nil, false, err
		}
		left, ok := limit.sub(amount)
		if !ok {
			return nil, false, fmt.Errorf("stake authorization overspent: %w", errOverspent)
		}
		if left.isZero() {
			return nil, true, nil
		}
		for d, n := range left {
			a.set("max_tokens", coin{d, n.String()})
		}
	default:
		return auth, false, nil
	}
	b, err := json.Marshal(a)
	return b, false, err
}

// PayFee charges a fee to an allowance at a block time: the updated
// allowance, or deleted when its spend limit is used up (as the feegrant
// keeper removes it).
func PayFee(allowance json.RawMessage, fee coins, at time.Time) (out json.RawMessage, deleted bool, err error) {
	var a object
	if err := json.Unmarshal(allowance, &a); err != nil {
		return nil, false, err
	}
	switch a.str("@type") {
	case basicAllowance:
		deleted, err = payBasic(a, fee)
	case periodicAllowance:
		deleted, err = payPeriodic(a, fee, at)
	case allowedMsgAllowance:
		inner, ierr := a.obj("allowance")
		if ierr != nil {
			return nil, false, ierr
		}
		raw, _ := json.Marshal(inner)
		var innerOut json.RawMessage
		innerOut, deleted, err = PayFee(raw, fee, at)
		if err == nil && !deleted {
			a["allowance"] = innerOut
		}
	default:
		return nil, false, fmt.Errorf("allowance type %q", a.str("@type"))
	}
	if err != nil || deleted {
		return nil, deleted, err
	}
	b, err := json.Marshal(a)
	return b, false, err
}

func payBasic(a object, fee coins) (bool, error) {
	limit, err := parseCoins(a["spend_limit"])
	if err != nil {
		return false, err
	}
	if len(limit) == 0 {
		return false, nil // no limit
	}
	left, ok := limit.sub(fee)
	if !ok {
		return false, fmt.Errorf("basic allowance overspent: %w", errOverspent)
	}
	if left.isZero() {
		return true, nil
	}
	a["spend_limit"] = left.json()
	return false, nil
}

func payPeriodic(a object, fee coins, at time.Time) (bool, error) {
	basic, err := a.obj("basic")
	if err != nil {
		return false, err
	}
	limit, err := parseCoins(basic["spend_limit"])
	if err != nil {
		return false, err
	}
	period, err := time.ParseDuration(a.str("period"))
	if err != nil {
		return false, fmt.Errorf("period %q: %w", a.str("period"), err)
	}
	reset, err := time.Parse(time.RFC3339Nano, a.str("period_reset"))
	if err != nil {
		return false, fmt.Errorf("period_reset %q: %w", a.str("period_reset"), err)
	}
	canSpend, err := parseCoins(a["period_can_spend"])
	if err != nil {
		return false, err
	}
	periodLimit, err := parseCoins(a["period_spend_limit"])
	if err != nil {
		return false, err
	}
	if !at.Before(reset) { // a new period: the lesser of the period and the total limit
		canSpend = periodLimit
		if len(limit) > 0 {
			if _, ok := limit.sub(periodLimit); !ok {
				canSpend = limit // as the keeper does: the whole total limit when it is below the period's
			}
		}
		reset = reset.Add(period)
		if at.After(reset) {
			reset = at.Add(period)
		}
		a.set("period_reset", reset.UTC().Format(time.RFC3339Nano))
	}
	left, ok := canSpend.sub(fee)
	if !ok {
		return false, fmt.Errorf("periodic allowance overspent in the period: %w", errOverspent)
	}
	a["period_can_spend"] = left.json()
	if len(limit) > 0 {
		rest, ok := limit.sub(fee)
		if !ok {
			return false, fmt.Errorf("periodic allowance overspent: %w", errOverspent)
		}
		if rest.isZero() {
			return true, nil
		}
		basic["spend_limit"] = rest.json()
		b, _ := json.Marshal(basic)
		a["basic"] = b
	}
	return false, nil
}

// AllowanceExpiration is the expiration of an allowance, if any.
func AllowanceExpiration(allowance json.RawMessage) (*time.Time, error) {
	var a object
	if err := json.Unmarshal(allowance, &a); err != nil {
		return nil, err
	}
	switch a.str("@type") {
	case periodicAllowance:
		b, err := a.obj("basic")
		if err != nil {
			return nil, err
		}
		a = b
	case allowedMsgAllowance:
		inner, err := a.obj("allowance")
		if err != nil {
			return nil, err
		}
		raw, _ := json.Marshal(inner)
		return AllowanceExpiration(raw)
	}
	s := a.str("expiration")
	if s == "" {
		return nil, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return nil, fmt.Errorf("expiration %q: %w", s, err)
	}
	return &t, nil
}
