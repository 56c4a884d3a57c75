package cosmos

import "testing"

// TestDenomPaths checks the ICS-20 path rules against vouchers the chain
// registry lists (osmosis and cosmoshub assetlists, chain-events.md §7.2).
func TestDenomPaths(t *testing.T) {
	for _, c := range []struct {
		name                                       string
		srcPort, srcChannel, dstPort, dstChannel   string
		packetDenom, wantPath, wantBase, wantDenom string
	}{
		{"NTRN arriving on Osmosis", "transfer", "channel-10", "transfer", "channel-874", "untrn",
			"transfer/channel-874/untrn", "untrn", "ibc/126DA09104B71B164883842B769C0E9EC1486C0887D27A9999E395C2C8FB5682"},
		{"STRD arriving on Osmosis", "transfer", "channel-5", "transfer", "channel-326", "ustrd",
			"transfer/channel-326/ustrd", "ustrd", "ibc/A8CA5EE328FA10C9519DF6057DA1F69682D28F7D0F5CCC7ECB72E3DCA2D157A4"},
		{"Noble USDC arriving on Osmosis", "transfer", "channel-1", "transfer", "channel-750", "uusdc",
			"transfer/channel-750/uusdc", "uusdc", "ibc/498A0751C798A0D9A389AA3691123DADA57DAA4FE165D5C75894505B876BA6E4"},
		{"ATOM returning to the Hub", "transfer", "channel-1", "transfer", "channel-569", "transfer/channel-1/uatom",
			"uatom", "uatom", "uatom"},
		{"a two-hop voucher", "transfer", "channel-1", "transfer", "channel-0", "transfer/channel-141/factory/osmo1abc/ophir",
			"transfer/channel-0/transfer/channel-141/factory/osmo1abc/ophir", "factory/osmo1abc/ophir", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := ReceivedPath(c.srcPort, c.srcChannel, c.dstPort, c.dstChannel, c.packetDenom)
			if path != c.wantPath {
				t.Fatalf("path %q, want %q", path, c.wantPath)
			}
			if b := BaseDenom(path); b != c.wantBase {
				t.Errorf("base %q, want %q", b, c.wantBase)
			}
			if c.wantDenom != "" {
				if d := VoucherDenom(path); d != c.wantDenom {
					t.Errorf("voucher %q, want %q", d, c.wantDenom)
				}
			}
		})
	}
}
