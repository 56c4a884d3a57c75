package config

// Family is how the chains of a kind are reached and decoded: CometBFT
// nodes serving cosmos-sdk blocks, or EVM JSON-RPC nodes serving logs.
// Each family has one source behind one indexer lifecycle.
type Family string

// The chain families.
const (
	FamilyCosmos Family = "cosmos"
	FamilyEVM    Family = "evm"
)

// KindEVM is the kind of every EVM chain (one adapter: ERC-20 and CCTP logs).
const KindEVM = "evm"

// Kinds lists the chain kinds an adapter exists for: the cosmos kinds
// (chains/kinds maps each to its adapter) and KindEVM.
var Kinds = []string{"osmosis", "dydx", "neutron", "cosmoshub", "xion", "noble", "cosmos", KindEVM}

// FamilyOf is the family of a chain kind.
func FamilyOf(kind string) Family {
	if kind == KindEVM {
		return FamilyEVM
	}
	return FamilyCosmos
}

// Family is the chain's family (FamilyOf its kind).
func (c Chain) Family() Family { return FamilyOf(c.Kind) }

// IsEVM reports whether the chain is an EVM chain.
func (c Chain) IsEVM() bool { return c.Family() == FamilyEVM }
