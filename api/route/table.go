package route

// Table returns a fresh slice of every operation, the groups concatenated in
// the order of Groups and the operations of each group in the order of the
// interface.
func Table() []Operation {
	return concatOps(
		engagementOps(),
		dexOps(),
		dexLensOps(),
		perpOps(),
		perpLensOps(),
		stablecoinOps(),
		dex2Ops(),
		stakingOps(),
		smartAccountOps(),
	)
}

// concatOps joins operation lists into one fresh slice.
func concatOps(lists ...[]Operation) []Operation {
	var out []Operation
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}
