// Package devnettest starts the in-process devnet (devchain/devnet) for a
// test.
package devnettest

import (
	"context"
	"testing"
	"time"

	"github.com/chainlens/chainlens/devchain/devnet"
)

// Start runs the devnet with 100 ms blocks for t, closed when t ends, and
// returns it, a context that ends after timeout (or with t) and the
// accounts' addresses by name (node0, user0, …). Under -short the test is
// skipped: the chain takes seconds to start. One devnet runs per process.
func Start(t testing.TB, timeout time.Duration) (*devnet.Net, context.Context, map[string]string) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts an in-process chain")
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	n, err := devnet.Start(ctx, devnet.Options{BlockTime: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.Close() })
	addr := map[string]string{}
	for _, a := range n.Accounts() {
		addr[a.Name] = a.Address
	}
	return n, ctx, addr
}
