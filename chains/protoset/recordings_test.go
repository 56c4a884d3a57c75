package protoset

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"

	txtypes "github.com/cosmos/cosmos-sdk/types/tx"
)

// recordedMessage is one message of a recorded tx.
type recordedMessage struct {
	chain   string
	height  int
	typeURL string
	value   []byte
}

// recordings are the localnets in testdata/localnet with the shipped set
// of each chain's own modules.
var recordings = []struct{ name, set string }{
	{"osmosis", "osmosis"}, {"dydx", "dydx"}, {"neutron", "neutron"}, {"xion", "xion"}, {"cosmoshub", "gaia"},
}

// recordedMessages reads every message of every tx of a recorded localnet
// (txs that are not cosmos txs, such as dYdX's vote-extension blob, have
// none).
var recordedMessages = sync.OnceValues(func() (map[string][]recordedMessage, error) {
	out := map[string][]recordedMessage{}
	for _, rec := range recordings {
		f, err := os.Open(filepath.Join("../../testdata/localnet", rec.name, "blocks.jsonl.gz"))
		if err != nil {
			return nil, err
		}
		zr, err := gzip.NewReader(f)
		if err != nil {
			f.Close()
			return nil, err
		}
		sc := bufio.NewScanner(zr)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for h := 1; sc.Scan(); h++ {
			var line struct {
				Result struct {
					Block struct{ Data struct{ Txs [][]byte } }
				}
			}
			if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
				f.Close()
				return nil, err
			}
			for _, raw := range line.Result.Block.Data.Txs {
				var tr txtypes.TxRaw
				var body txtypes.TxBody
				if tr.Unmarshal(raw) != nil || tr.Size() != len(raw) || body.Unmarshal(tr.BodyBytes) != nil {
					continue
				}
				for _, m := range body.Messages {
					out[rec.name] = append(out[rec.name], recordedMessage{rec.name, h, m.TypeUrl, m.Value})
				}
			}
		}
		f.Close()
		if err := sc.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
})

// Every message of every recorded localnet decodes with the shipped sets
// of its chain, and where the cosmos-sdk's own codec also decodes it (the
// standard modules), the JSON is byte for byte the SDK's.
func TestRecordedMessages(t *testing.T) {
	msgs, err := recordedMessages()
	if err != nil {
		t.Fatal(err)
	}
	ref := newSDKReference()
	for _, rec := range recordings {
		t.Run(rec.name, func(t *testing.T) {
			r, err := NewShipped(rec.set)
			if err != nil {
				t.Fatal(err)
			}
			if len(msgs[rec.name]) == 0 {
				t.Fatal("no messages")
			}
			compared := 0
			for _, m := range msgs[rec.name] {
				got, err := r.MessageJSON(m.typeURL, m.value)
				if err != nil {
					t.Errorf("height %d %s: %v", m.height, m.typeURL, err)
					continue
				}
				want, err := ref.MessageJSON(m.typeURL, m.value)
				if err != nil {
					continue // a type (or an Any inside) the SDK's own modules do not have
				}
				compared++
				if !bytes.Equal(got, want) {
					t.Errorf("height %d %s:\n got %s\nsdk %s (%v)", m.height, m.typeURL, got, want, err)
				}
			}
			t.Logf("%d messages, %d compared with the SDK's codec", len(msgs[rec.name]), compared)
		})
	}
}
