package chains

import "testing"

func TestParseGenesisInitialHeight(t *testing.T) {
	cases := []struct {
		doc     string
		want    int64
		wantErr bool
	}{
		{`{"chain_id":"a","initial_height":"1"}`, 1, false},
		{`{"chain_id":"a","initial_height":"5200791"}`, 5200791, false},
		{`{"chain_id":"a","initial_height":12}`, 12, false},
		{`{"chain_id":"a","initial_height":"0"}`, 1, false},
		{`{"chain_id":"a"}`, 1, false},
		{`{"chain_id":"a","initial_height":"-3"}`, 0, true},
		{`{"chain_id":"a","initial_height":"x"}`, 0, true},
		{`[`, 0, true},
	}
	for _, c := range cases {
		g, err := ParseGenesis([]byte(c.doc))
		if (err != nil) != c.wantErr {
			t.Errorf("%s: err %v", c.doc, err)
			continue
		}
		if err == nil && (g.InitialHeight != c.want || g.ChainID != "a") {
			t.Errorf("%s: %+v, want initial height %d", c.doc, g, c.want)
		}
	}
}
