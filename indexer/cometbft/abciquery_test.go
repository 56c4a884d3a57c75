package cometbft

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
)

// TestABCIQueryAnswers: a value is the answer; code 0 without a value is
// an empty answer (an absent key, an empty message), unless its log says
// the version asked for does not exist (how a cosmos-sdk store read of a
// pruned or future height answers); another code is an error.
func TestABCIQueryAnswers(t *testing.T) {
	answer := func(code int, log string, value []byte) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"result":{"response":{"code":%d,"log":%q,"value":%q,"height":"19"}}}`,
			code, log, base64.StdEncoding.EncodeToString(value))
	}
	for _, c := range []struct {
		name    string
		body    string
		want    string
		wantErr string
	}{
		{"a value", answer(0, "", []byte{0x0a, 0x01, 0x08}), "0a0108", ""},
		{"nothing", answer(0, "", nil), "", ""},
		{"a version the store does not keep", answer(0, "version does not exist", nil), "",
			"cometbft abci_query /store/concentratedliquidity/subspace at 19: version does not exist"},
		{"a refusal", answer(6, "unknown query path", nil), "", "code 6: unknown query path"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cl := testClient(t, &answerServer{body: c.body})
			got, err := cl.ABCIQuery(context.Background(), "/store/concentratedliquidity/subspace", []byte{0x08}, 19)
			switch {
			case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
				t.Fatalf("err = %v, want %q", err, c.wantErr)
			case c.wantErr == "" && err != nil:
				t.Fatal(err)
			case fmt.Sprintf("%x", got) != c.want:
				t.Fatalf("value %x, want %s", got, c.want)
			}
		})
	}
}
