package indexer

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/chainlens/chainlens/indexer/cometbft"
)

// TestEndpointHealthMetrics: each endpoint is a series labelled by its place
// and host; a URL's user info and path (where credentials live) are not
// exported.
func TestEndpointHealthMetrics(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	health := func() []cometbft.EndpointHealth {
		return []cometbft.EndpointHealth{
			{URL: "https://user:s3cret@rpc.example:443/apikey/abc", Calls: 7, Errors: 2, ConsecutiveFailures: 2, Down: true},
			{URL: "http://127.0.0.1:26657", Calls: 5},
		}
	}
	for _, chain := range []string{"a-1", "b-1"} {
		if err := RegisterEndpointHealth(reg, chain, health); err != nil {
			t.Fatal(err)
		}
	}
	want := `
# HELP chainlens_rpc_endpoint_up 1 while the endpoint is used, 0 while it is skipped after failures.
# TYPE chainlens_rpc_endpoint_up gauge
chainlens_rpc_endpoint_up{chain="a-1",endpoint="127.0.0.1:26657",index="1"} 1
chainlens_rpc_endpoint_up{chain="a-1",endpoint="rpc.example:443",index="0"} 0
chainlens_rpc_endpoint_up{chain="b-1",endpoint="127.0.0.1:26657",index="1"} 1
chainlens_rpc_endpoint_up{chain="b-1",endpoint="rpc.example:443",index="0"} 0
# HELP chainlens_rpc_endpoint_errors_total Calls to the endpoint that failed.
# TYPE chainlens_rpc_endpoint_errors_total counter
chainlens_rpc_endpoint_errors_total{chain="a-1",endpoint="127.0.0.1:26657",index="1"} 0
chainlens_rpc_endpoint_errors_total{chain="a-1",endpoint="rpc.example:443",index="0"} 2
chainlens_rpc_endpoint_errors_total{chain="b-1",endpoint="127.0.0.1:26657",index="1"} 0
chainlens_rpc_endpoint_errors_total{chain="b-1",endpoint="rpc.example:443",index="0"} 2
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "chainlens_rpc_endpoint_up", "chainlens_rpc_endpoint_errors_total"); err != nil {
		t.Error(err)
	}
	mfs, _ := reg.Gather()
	for _, mf := range mfs {
		if s := mf.String(); strings.Contains(s, "s3cret") || strings.Contains(s, "apikey") {
			t.Errorf("credentials exported: %s", s)
		}
	}
}
