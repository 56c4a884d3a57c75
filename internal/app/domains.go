package app

// domains lists every domain, in the order their jobs run: the dex
// reports first (the engagement jobs value dex volume with their prices),
// the engagement jobs after every chain's own, IBC packets last.
func domains() []domain {
	return []domain{dex(), perp(), dex2(), staking(), smartAccounts(), stablecoins(), engagementDomain(), ibcDomain()}
}
