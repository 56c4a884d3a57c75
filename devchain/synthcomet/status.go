package synthcomet

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/cometbft/cometbft/crypto/ed25519"
	cmtjson "github.com/cometbft/cometbft/libs/json"
	"github.com/cometbft/cometbft/p2p"
	coretypes "github.com/cometbft/cometbft/rpc/core/types"
	cmttypes "github.com/cometbft/cometbft/types"
)

// Status is a CometBFT 0.38 /status of a node of chainID running
// cometVersion, whose validator is v (replaynode rewrites its sync_info
// for each call). moniker also seeds the node key.
func Status(chainID, cometVersion, moniker string, v *cmttypes.Validator, genesis time.Time) (json.RawMessage, error) {
	nodeKey := ed25519.GenPrivKeyFromSecret([]byte(moniker + " node"))
	st := coretypes.ResultStatus{
		NodeInfo: p2p.DefaultNodeInfo{
			ProtocolVersion: p2p.NewProtocolVersion(8, 11, 0),
			DefaultNodeID:   p2p.PubKeyToID(nodeKey.PubKey()),
			ListenAddr:      "tcp://0.0.0.0:26656",
			Network:         chainID,
			Version:         cometVersion,
			Channels:        []byte{0x40, 0x20, 0x21, 0x22, 0x23, 0x30, 0x38, 0x60, 0x61, 0x00},
			Moniker:         moniker,
			Other:           p2p.DefaultNodeInfoOther{TxIndex: "on", RPCAddress: "tcp://0.0.0.0:26657"},
		},
		SyncInfo: coretypes.SyncInfo{
			LatestBlockHeight: 1, LatestBlockTime: genesis, EarliestBlockHeight: 1, EarliestBlockTime: genesis,
		},
		ValidatorInfo: coretypes.ValidatorInfo{Address: v.Address, PubKey: v.PubKey, VotingPower: v.VotingPower},
	}
	b, err := cmtjson.Marshal(st)
	if err != nil {
		return nil, fmt.Errorf("synthcomet: encode status: %w", err)
	}
	return b, nil
}
