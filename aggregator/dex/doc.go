// Package dex builds the Osmosis dex report tables from the rows of
// chains/osmosis: hourly USD prices (job dex_prices), hourly USD swap
// volume per asset (job dex_volume), and the other jobs of report/dex,
// which names them and holds the pricing settings (Market) the API shares.
//
// Prices are last-trade prices: the USD price of a denom at the close of
// an hour is the execution price (amount ratio of one token_swapped hop)
// of the most recent swap between it and the USD anchor in any pool, or,
// when it never traded against the anchor, its most recent price in the
// hub denom (OSMO) times the hub's USD price.
package dex
