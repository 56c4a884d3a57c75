package dex

// Each wallet's activity over the last 7 UTC days, as the dex_activity job
// (JobActivity) keeps it beside osmosis_wallet_daily: WalletWeek holds every
// wallet's USD sums over the 7 days ending WalletWeekEnd.day (the last day
// with activity; the job rebuilds it on each run from the daily rows), so a
// ranking of the week reads its page by an index. A window that ends on
// another day than the one asked for is not in it: read the daily rows.
const (
	WalletWeek    = "osmosis_wallet_7d"
	WalletWeekEnd = "osmosis_wallet_7d_end"
)
