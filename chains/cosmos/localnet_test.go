package cosmos

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/chainlens/chainlens/chains"
)

// Expected counts of the localnet recordings, copied from each
// testdata/localnet/<name>/README.md (tables "Message actions", "Event
// types", "Failed transactions", "Counts").

type failedTx struct {
	height    int64
	index     int
	code      uint32
	codespace string
}

type localnetWant struct {
	name, chainID, prefix string
	blocks, txs, failed   int
	blocksWithTxs         int
	undecodable           int
	unknownMsgs           int            // messages kept raw (types no shipped descriptor set defines)
	actions               map[string]int // message.action values in tx events
	txEventTypes          map[string]int
	blockEvents           map[string]int // "type/mode"
	blockEventsByType     map[string]int // when the README gives no mode
	msgTypes              map[string]int // decoded message type URLs (dYdX README "msgs")
	failedTxs             []failedTx
}

var localnets = []localnetWant{
	{
		name: "osmosis", chainID: "localosmosis", prefix: "osmo", unknownMsgs: 0,
		blocks: 299, txs: 395, failed: 6, blocksWithTxs: 176,
		actions: osmosisActions, txEventTypes: osmosisTxEventTypes, blockEvents: osmosisBlockEvents,
		failedTxs: osmosisFailed,
	},
	{
		name: "dydx", chainID: "localdydxprotocol", prefix: "dydx", unknownMsgs: 0,
		// every block from height 2 has the vote-extension blob at txs[0]; it
		// is the only failed tx (code 2 "tx parse error")
		blocks: 520, txs: 2621, failed: 519, undecodable: 519, blocksWithTxs: 520,
		txEventTypes: dydxTxEventTypes, blockEventsByType: dydxBlockEventTypes, msgTypes: dydxMsgTypes,
	},
	{
		name: "neutron", chainID: "localneutron", prefix: "neutron", unknownMsgs: 0,
		blocks: 193, txs: 148, failed: 14, blocksWithTxs: 100,
		actions: neutronActions, txEventTypes: neutronTxEventTypes, blockEvents: neutronBlockEvents,
		failedTxs: neutronFailed,
	},
	{
		name: "xion", chainID: "localxion", prefix: "xion", unknownMsgs: 0,
		blocks: 141, txs: 84, failed: 6, blocksWithTxs: 84,
		actions: xionActions, txEventTypes: xionTxEventTypes, blockEventsByType: xionBlockEventTypes,
		failedTxs: xionFailed,
	},
	{
		name: "cosmoshub", chainID: "localcosmos", prefix: "cosmos", unknownMsgs: 0,
		blocks: 169, txs: 148, failed: 13, blocksWithTxs: 109,
		actions: cosmoshubActions, txEventTypes: cosmoshubTxEventTypes, blockEvents: cosmoshubBlockEvents,
		failedTxs: cosmoshubFailed,
	},
}

func TestLocalnets(t *testing.T) {
	for _, w := range localnets {
		t.Run(w.name, func(t *testing.T) {
			ln := loadLocalnet(t, w.name, w.chainID, w.prefix)
			if len(ln.blocks) != w.blocks {
				t.Fatalf("%d recorded heights, want %d", len(ln.blocks), w.blocks)
			}
			ta := ln.decodeAll(t) // zero errors
			if ta.blocks != w.blocks || ta.txs != w.txs || ta.failed != w.failed ||
				ta.undecodable != w.undecodable || ta.blocksWithTxs != w.blocksWithTxs {
				t.Errorf("blocks/txs/failed/undecodable/blocks with txs = %d/%d/%d/%d/%d, want %d/%d/%d/%d/%d",
					ta.blocks, ta.txs, ta.failed, ta.undecodable, ta.blocksWithTxs,
					w.blocks, w.txs, w.failed, w.undecodable, w.blocksWithTxs)
			}
			if ta.unknownMsgs != w.unknownMsgs {
				t.Errorf("%d unknown messages, want %d", ta.unknownMsgs, w.unknownMsgs)
			}
			if w.actions != nil {
				assertCounts(t, "message.action", ta.actions, w.actions)
			}
			assertCounts(t, "tx event types", ta.txEventTypes, w.txEventTypes)
			if w.blockEvents != nil {
				assertCounts(t, "block events", ta.blockEventTypes, w.blockEvents)
			}
			if w.blockEventsByType != nil {
				byType := map[string]int{}
				for k, n := range ta.blockEventTypes {
					byType[strings.SplitN(k, "/", 2)[0]] += n
				}
				assertCounts(t, "block event types", byType, w.blockEventsByType)
			}
			if w.msgTypes != nil {
				assertCounts(t, "decoded message types", ta.msgTypes, w.msgTypes)
			}
			if w.failedTxs != nil {
				var got []failedTx
				for h := int64(1); h <= int64(ta.blocks); h++ {
					for _, tx := range ta.blocksByHeight[h].Txs {
						if !tx.Succeeded() {
							got = append(got, failedTx{h, tx.Index, tx.Code, tx.Codespace})
						}
					}
				}
				if !reflect.DeepEqual(got, w.failedTxs) {
					t.Errorf("failed txs = %v, want %v", got, w.failedTxs)
				}
			}
			checkInvariants(t, ln, ta)
		})
	}
}

// checkInvariants checks, on every decoded height, what holds for any
// well-formed recording.
func checkInvariants(t *testing.T, ln *localnet, ta *tally) {
	t.Helper()
	// The chain's message.action (type-URL actions; neutron's dex module
	// adds actions of its own) counts exactly the top-level messages of the
	// succeeded txs, as the decoder reads them from the tx bytes.
	fromTxs := map[string]int{}
	fromEvents := map[string]int{}
	for k, n := range ta.actions {
		if strings.HasPrefix(k, "/") {
			fromEvents[k] = n
		}
	}
	for h := int64(1); h <= int64(ta.blocks); h++ {
		b := ta.blocksByHeight[h]
		if b.Height != h || b.ChainID != ln.chainID || len(b.Hash) != 64 || len(b.Proposer) != 40 || b.Time.IsZero() {
			t.Fatalf("height %d: header %q %q %q %v", h, b.ChainID, b.Hash, b.Proposer, b.Time)
		}
		if b.Stats.Base64Attributes {
			t.Errorf("height %d: base64 attributes detected in a 0.38 recording", h)
		}
		for i, ev := range b.Events {
			if ev.TxIndex != -1 || ev.Index != i {
				t.Fatalf("height %d: block event %d has tx %d index %d", h, i, ev.TxIndex, ev.Index)
			}
		}
		for i := range b.Txs {
			tx := &b.Txs[i]
			if tx.Index != i || len(tx.Hash) != 64 || strings.ToUpper(tx.Hash) != tx.Hash {
				t.Fatalf("height %d tx %d: index %d hash %q", h, i, tx.Index, tx.Hash)
			}
			for j, ev := range tx.Events {
				if ev.TxIndex != i || ev.Index != j || ev.Mode != "" {
					t.Fatalf("height %d tx %d event %d: %+v", h, i, j, ev)
				}
			}
			if tx.Undecodable {
				if len(tx.Messages) != 0 || tx.Signers != nil {
					t.Fatalf("height %d tx %d: undecodable tx with content", h, i)
				}
				continue
			}
			if len(tx.Messages) == 0 {
				t.Errorf("height %d tx %d: no messages", h, i)
			}
			for _, m := range tx.Messages {
				// (Raw may be empty: dYdX's empty MsgAcknowledgeBridges encodes to no bytes.)
				if m.JSON != nil && !chainRegistry(localnetSets[ln.name]).Known(m.TypeURL) {
					t.Errorf("height %d tx %d msg %d: JSON for unknown type %s", h, i, m.Index, m.TypeURL)
				}
				if m.JSON != nil && !json.Valid(m.JSON) {
					t.Errorf("height %d tx %d msg %d: invalid JSON", h, i, m.Index)
				}
				if tx.Succeeded() {
					fromTxs[m.TypeURL]++
				}
			}
		}
	}
	assertCounts(t, "succeeded top-level messages vs message.action", fromTxs, fromEvents)
}

// msgWant is a decoded message; JSON is compared as JSON values.
type msgWant struct {
	typeURL string
	json    string // "" = unknown type, kept raw
}

type txWant struct {
	net       string
	hash      string
	height    int64
	index     int
	code      uint32
	gasWanted int64
	gasUsed   int64
	memo      string
	fee       []chains.Coin
	feePayer  string
	signers   []string
	msgs      []msgWant
}

// Transactions from each localnet's actions.md, with their decoded values.
var localnetTxs = []txWant{
	{
		// actions.md #1 "bank send erin->frank multi-denom"
		net: "osmosis", hash: "5C252E756F3F185F6258A468B0C72AD6F34EEEA70FBDC7A8E8C149D08C4D8018", height: 4, index: 2,
		gasWanted: 164536, gasUsed: 114577,
		fee: []chains.Coin{{Denom: "uosmo", Amount: "5759"}}, feePayer: "osmo10djef6v9uls3svdz3438m05l8hak33rlwhk90s",
		signers: []string{"osmo10djef6v9uls3svdz3438m05l8hak33rlwhk90s"},
		msgs:    []msgWant{{"/cosmos.bank.v1beta1.MsgSend", `{"from_address":"osmo10djef6v9uls3svdz3438m05l8hak33rlwhk90s","to_address":"osmo1e3l0nsmyaquh8f30kyzmtek6j02d0swu3jpyvs","amount":[{"denom":"uion","amount":"2911069"},{"denom":"uusdc","amount":"1441657"}]}`}},
	},
	{
		// #2 "bank send alice->bob uosmo"
		net: "osmosis", hash: "C5409298951A5D4C64AF2CFF8B0B826AA8B6EA17F41AD4037412344C652EDA3F", height: 4, index: 1,
		gasWanted: 138420, gasUsed: 97136,
		fee: []chains.Coin{{Denom: "uosmo", Amount: "4845"}}, feePayer: "osmo16kaefa02pez2jkxsnwrqmsc4ap9jnaadnac95n",
		signers: []string{"osmo16kaefa02pez2jkxsnwrqmsc4ap9jnaadnac95n"},
		msgs:    []msgWant{{"/cosmos.bank.v1beta1.MsgSend", `{"from_address":"osmo16kaefa02pez2jkxsnwrqmsc4ap9jnaadnac95n","to_address":"osmo19cntltr3qf7pcny7xeq4lm7cl64xn54hvswrdh","amount":[{"denom":"uosmo","amount":"23818731"}]}`}},
	},
	{
		// #6 "staking delegate dave->val"
		net: "osmosis", hash: "4845148CE08ECCD292DD846AB93866091790AD3EAD0DF02E0B1C6181A9C27EC5", height: 7, index: 3,
		gasWanted: 227022, gasUsed: 156102,
		fee: []chains.Coin{{Denom: "uosmo", Amount: "7946"}}, feePayer: "osmo1dwyz79xpa3ax9aa2l8rc0lpqg9thd0kfsexefg",
		signers: []string{"osmo1dwyz79xpa3ax9aa2l8rc0lpqg9thd0kfsexefg"},
		msgs:    []msgWant{{"/cosmos.staking.v1beta1.MsgDelegate", `{"delegator_address":"osmo1dwyz79xpa3ax9aa2l8rc0lpqg9thd0kfsexefg","validator_address":"osmovaloper1u8fw2qcjg52u4uamxw4dfzzc2w0f7a7clhfr6k","amount":{"denom":"uosmo","amount":"388516586"}}`}},
	},
	{
		// #16 gov submit-proposal community-pool-spend: a nested Any decoded
		net: "osmosis", hash: "D156F981BEDEE23646B9855A5FBB8C78BD2DE64777DA1D85449CECA5ABF674E9", height: 9, index: 1,
		gasWanted: 237685, gasUsed: 163043,
		fee: []chains.Coin{{Denom: "uosmo", Amount: "8319"}}, feePayer: "osmo16kaefa02pez2jkxsnwrqmsc4ap9jnaadnac95n",
		signers: []string{"osmo16kaefa02pez2jkxsnwrqmsc4ap9jnaadnac95n"},
		msgs:    []msgWant{{"/cosmos.gov.v1.MsgSubmitProposal", `{"messages":[{"@type":"/cosmos.distribution.v1beta1.MsgCommunityPoolSpend","authority":"osmo10d07y265gmmuvt4z0w9aw880jnsr700jjeq4qp","recipient":"osmo10djef6v9uls3svdz3438m05l8hak33rlwhk90s","amount":[{"denom":"uosmo","amount":"250000000"}]}],"initial_deposit":[{"denom":"uosmo","amount":"4000000"}],"proposer":"osmo16kaefa02pez2jkxsnwrqmsc4ap9jnaadnac95n","metadata":"","title":"Fund localnet tooling","summary":"Community pool spend to fund indexer test tooling","expedited":false}`}},
	},
	{
		// #17 legacy proposal with Osmosis content: a known type holding an
		// unknown Any is kept raw
		net: "osmosis", hash: "955AD737C4B3C197845F8DA9BC5A3E37076AAF169C9AC278F8960B208AEC04AF", height: 9, index: 0,
		gasWanted: 313867, gasUsed: 213787,
		fee: []chains.Coin{{Denom: "uosmo", Amount: "10986"}}, feePayer: "osmo19cntltr3qf7pcny7xeq4lm7cl64xn54hvswrdh",
		signers: []string{"osmo19cntltr3qf7pcny7xeq4lm7cl64xn54hvswrdh"},
		// A legacy proposal of Osmosis's own superfluid module inside
		// MsgExecLegacyContent: Anys two deep, decoded from Osmosis's
		// shipped descriptors.
		msgs: []msgWant{{"/cosmos.gov.v1.MsgSubmitProposal", `{"messages":[{"@type":"/cosmos.gov.v1.MsgExecLegacyContent","content":{"@type":"/osmosis.superfluid.v1beta1.SetSuperfluidAssetsProposal","title":"Add superfluid asset","description":"Enable gamm/pool/3 for superfluid staking","assets":[{"denom":"gamm/pool/3","asset_type":"SuperfluidAssetTypeLPShare"}]},"authority":"osmo10d07y265gmmuvt4z0w9aw880jnsr700jjeq4qp"}],"initial_deposit":[{"denom":"uosmo","amount":"10000000"}],"proposer":"osmo19cntltr3qf7pcny7xeq4lm7cl64xn54hvswrdh","metadata":"","title":"Add superfluid asset","summary":"Enable gamm/pool/3 for superfluid staking","expedited":false}`}},
	},
	{
		// #66 "authz exec (bank send on behalf of granter)"
		net: "osmosis", hash: "50012DEDB5ECF767F0AB10E1CDBAC9201B42D6210B866AA6353A5CF988B3C912", height: 27, index: 2,
		gasWanted: 133797, gasUsed: 93730,
		fee: []chains.Coin{{Denom: "uosmo", Amount: "4683"}}, feePayer: "osmo19cntltr3qf7pcny7xeq4lm7cl64xn54hvswrdh",
		signers: []string{"osmo19cntltr3qf7pcny7xeq4lm7cl64xn54hvswrdh"},
		msgs:    []msgWant{{"/cosmos.authz.v1beta1.MsgExec", `{"grantee":"osmo19cntltr3qf7pcny7xeq4lm7cl64xn54hvswrdh","msgs":[{"@type":"/cosmos.bank.v1beta1.MsgSend","from_address":"osmo16kaefa02pez2jkxsnwrqmsc4ap9jnaadnac95n","to_address":"osmo1dwyz79xpa3ax9aa2l8rc0lpqg9thd0kfsexefg","amount":[{"denom":"uosmo","amount":"1841686"}]}]}`}},
	},
	{
		// #76 "multi-msg tx (bank send x2 + staking delegate)" with a memo
		net: "osmosis", hash: "65AF8C551C1DEC6CE065F5A03A21406CBD529B1B5C0941C487C57F6523706A0B", height: 29, index: 0,
		gasWanted: 500000, gasUsed: 207960, memo: "batched: 2 sends + delegate",
		fee: []chains.Coin{{Denom: "uosmo", Amount: "20000"}}, feePayer: "osmo1dwyz79xpa3ax9aa2l8rc0lpqg9thd0kfsexefg",
		signers: []string{"osmo1dwyz79xpa3ax9aa2l8rc0lpqg9thd0kfsexefg"},
		msgs: []msgWant{
			{"/cosmos.bank.v1beta1.MsgSend", `{"from_address":"osmo1dwyz79xpa3ax9aa2l8rc0lpqg9thd0kfsexefg","to_address":"osmo10djef6v9uls3svdz3438m05l8hak33rlwhk90s","amount":[{"denom":"uosmo","amount":"2233308"}]}`},
			{"/cosmos.bank.v1beta1.MsgSend", `{"from_address":"osmo1dwyz79xpa3ax9aa2l8rc0lpqg9thd0kfsexefg","to_address":"osmo1e3l0nsmyaquh8f30kyzmtek6j02d0swu3jpyvs","amount":[{"denom":"uosmo","amount":"3551502"}]}`},
			{"/cosmos.staking.v1beta1.MsgDelegate", `{"delegator_address":"osmo1dwyz79xpa3ax9aa2l8rc0lpqg9thd0kfsexefg","validator_address":"osmovaloper1u8fw2qcjg52u4uamxw4dfzzc2w0f7a7clhfr6k","amount":{"denom":"uosmo","amount":"5212018"}}`},
		},
	},
	{
		// #78 "bank send (FAIL: insufficient funds)": failed txs decode too
		net: "osmosis", hash: "8BFBC2EA32540031A2C95FB4783110477CE5B7DA930BE063DC4BFE0906842E38", height: 30, index: 1, code: 5,
		gasWanted: 200000, gasUsed: 70033,
		fee: []chains.Coin{{Denom: "uosmo", Amount: "7000"}}, feePayer: "osmo1e3l0nsmyaquh8f30kyzmtek6j02d0swu3jpyvs",
		signers: []string{"osmo1e3l0nsmyaquh8f30kyzmtek6j02d0swu3jpyvs"},
		msgs:    []msgWant{{"/cosmos.bank.v1beta1.MsgSend", `{"from_address":"osmo1e3l0nsmyaquh8f30kyzmtek6j02d0swu3jpyvs","to_address":"osmo16kaefa02pez2jkxsnwrqmsc4ap9jnaadnac95n","amount":[{"denom":"uatom","amount":"1000000000000000000"}]}`}},
	},
	{
		// "bank_send alice->dave 1000 dv4tnt" (4D211ACD45294D6E…, h4 tx #2)
		net: "dydx", hash: "4D211ACD45294D6E5A497B8390B4CB2E3E1F46BF12FD6DAB51001BABD1ACA114", height: 4, index: 2,
		gasWanted: 400000, gasUsed: 69603,
		fee: []chains.Coin{{Denom: "adv4tnt", Amount: "10000000000000000"}}, feePayer: "dydx199tqg4wdlnu4qjlxchpd7seg454937hjrknju4",
		signers: []string{"dydx199tqg4wdlnu4qjlxchpd7seg454937hjrknju4"},
		msgs:    []msgWant{{"/cosmos.bank.v1beta1.MsgSend", `{"from_address":"dydx199tqg4wdlnu4qjlxchpd7seg454937hjrknju4","to_address":"dydx1wau5mja7j7zdavtfq9lu7ejef05hm6ffenlcsn","amount":[{"denom":"adv4tnt","amount":"1000000000000000000000"}]}`}},
	},
	{
		// "delegate bob delegates 10000 dv4tnt" (7E954EF006861CB1…, h7 tx #3)
		net: "dydx", hash: "7E954EF006861CB1333EF1F2652E82CF726AB0E07DDEED4644BA2B79BE66678A", height: 7, index: 3,
		gasWanted: 400000, gasUsed: 128350,
		fee: []chains.Coin{{Denom: "adv4tnt", Amount: "10000000000000000"}}, feePayer: "dydx10fx7sy6ywd5senxae9dwytf8jxek3t2gcen2vs",
		signers: []string{"dydx10fx7sy6ywd5senxae9dwytf8jxek3t2gcen2vs"},
		msgs:    []msgWant{{"/cosmos.staking.v1beta1.MsgDelegate", `{"delegator_address":"dydx10fx7sy6ywd5senxae9dwytf8jxek3t2gcen2vs","validator_address":"dydxvaloper199tqg4wdlnu4qjlxchpd7seg454937hjxg9yhy","amount":{"denom":"adv4tnt","amount":"10000000000000000000000"}}`}},
	},
	{
		// actions.md #2 "bank send alice {to: dave, amount: 7000000000uibcatom}"
		net: "neutron", hash: "B20745751C9A298B6E8C8481F2A56D18FE82520DFD85578D7DB9382489D456A5", height: 17, index: 0,
		gasWanted: 200000, gasUsed: 188924,
		fee: []chains.Coin{{Denom: "untrn", Amount: "1001"}}, feePayer: "neutron1fu29ajlqx4c3vjgkt5eypjgh4yn9ua4kmhpm4l",
		signers: []string{"neutron1fu29ajlqx4c3vjgkt5eypjgh4yn9ua4kmhpm4l"},
		msgs:    []msgWant{{"/cosmos.bank.v1beta1.MsgSend", `{"from_address":"neutron1fu29ajlqx4c3vjgkt5eypjgh4yn9ua4kmhpm4l","to_address":"neutron1dry7kv0526kw20te36e9g8wsa33jaa950u4z49","amount":[{"denom":"uibcatom","amount":"7000000000"}]}`}},
	},
	{
		// #1 "bank send val {to: erin, amount: 5000000untrn}"
		net: "neutron", hash: "4F061E86EDE8A20F4F61670F38DE2D648826193E84A3B997AB8742634D831DE0", height: 17, index: 1,
		gasWanted: 200000, gasUsed: 132540,
		fee: []chains.Coin{{Denom: "untrn", Amount: "1001"}}, feePayer: "neutron16pjymwyvxft8d46etgn34wfe5j0raw0xwr2xsa",
		signers: []string{"neutron16pjymwyvxft8d46etgn34wfe5j0raw0xwr2xsa"},
		msgs:    []msgWant{{"/cosmos.bank.v1beta1.MsgSend", `{"from_address":"neutron16pjymwyvxft8d46etgn34wfe5j0raw0xwr2xsa","to_address":"neutron149ut34spfaahmg7andem3pgl4dzwuhma8xp4dh","amount":[{"denom":"untrn","amount":"5000000"}]}`}},
	},
	{
		// h20 "bank send alice->bob 1000000uxion"
		net: "xion", hash: "08CD9E506996234F9FB1C3F49C5250B5FCB371A8C58EE7D535EE735FB24652CC", height: 20, index: 0,
		gasWanted: 97790, gasUsed: 79504,
		fee: []chains.Coin{{Denom: "uxion", Amount: "98"}}, feePayer: "xion1vffmlw0fsu5qm74naejhcxv20zewlkgum5yegf",
		signers: []string{"xion1vffmlw0fsu5qm74naejhcxv20zewlkgum5yegf"},
		msgs:    []msgWant{{"/cosmos.bank.v1beta1.MsgSend", `{"from_address":"xion1vffmlw0fsu5qm74naejhcxv20zewlkgum5yegf","to_address":"xion1a5zgz8ww2cft9j3z7jma6wyp6k4vmfwx542jmn","amount":[{"denom":"uxion","amount":"1000000"}]}`}},
	},
	{
		// h23 "bank send signed by smart account AA1->erin 111000uxion": the
		// signer comes from the NilPubKey (README: aa1 address)
		net: "xion", hash: "5FFA5B0FEDBA4A1EFA18D0D0D075A9A9556A37FCCF65F0189B7E2ED9678EEFB2", height: 23, index: 0,
		gasWanted: 700000, gasUsed: 82919,
		fee: []chains.Coin{{Denom: "uxion", Amount: "700"}}, feePayer: "xion1v8x38xfzt8qrc2lnzn78lqrnmgydcalvwzqh3768plq3kn6hey5qlew8ul",
		signers: []string{"xion1v8x38xfzt8qrc2lnzn78lqrnmgydcalvwzqh3768plq3kn6hey5qlew8ul"},
		msgs:    []msgWant{{"/cosmos.bank.v1beta1.MsgSend", `{"from_address":"xion1v8x38xfzt8qrc2lnzn78lqrnmgydcalvwzqh3768plq3kn6hey5qlew8ul","to_address":"xion16vmxg0huuckgvzk55hhgzt8an05lrxfgk9ce7c","amount":[{"denom":"uxion","amount":"111000"}]}`}},
	},
	{
		// h24 "bank send signed by smart account (Ed25519) AA2->erin 222000uxion"
		net: "xion", hash: "4B46BB34AD1B412B49E8292DE6B35C26910EE7C40976E25A168B05F4775E898B", height: 24, index: 0,
		gasWanted: 700000, gasUsed: 82919,
		fee: []chains.Coin{{Denom: "uxion", Amount: "700"}}, feePayer: "xion1jj2lte94w77cckvqgl0vc6nzu6dawex8dxsaw7f5s7pxhr2m2neqpd93uq",
		signers: []string{"xion1jj2lte94w77cckvqgl0vc6nzu6dawex8dxsaw7f5s7pxhr2m2neqpd93uq"},
		msgs:    []msgWant{{"/cosmos.bank.v1beta1.MsgSend", `{"from_address":"xion1jj2lte94w77cckvqgl0vc6nzu6dawex8dxsaw7f5s7pxhr2m2neqpd93uq","to_address":"xion16vmxg0huuckgvzk55hhgzt8an05lrxfgk9ce7c","amount":[{"denom":"uxion","amount":"222000"}]}`}},
	},
	{
		// h48 "authz exec by smart account (MsgSend alice->AA1) 777000uxion"
		net: "xion", hash: "2018055EDE895F32033901C031DC0D7FA7083B7558AF6ACEDC986FB47A350CC0", height: 48, index: 0,
		gasWanted: 700000, gasUsed: 94299,
		fee: []chains.Coin{{Denom: "uxion", Amount: "700"}}, feePayer: "xion1v8x38xfzt8qrc2lnzn78lqrnmgydcalvwzqh3768plq3kn6hey5qlew8ul",
		signers: []string{"xion1v8x38xfzt8qrc2lnzn78lqrnmgydcalvwzqh3768plq3kn6hey5qlew8ul"},
		msgs:    []msgWant{{"/cosmos.authz.v1beta1.MsgExec", `{"grantee":"xion1v8x38xfzt8qrc2lnzn78lqrnmgydcalvwzqh3768plq3kn6hey5qlew8ul","msgs":[{"@type":"/cosmos.bank.v1beta1.MsgSend","from_address":"xion1vffmlw0fsu5qm74naejhcxv20zewlkgum5yegf","to_address":"xion1v8x38xfzt8qrc2lnzn78lqrnmgydcalvwzqh3768plq3kn6hey5qlew8ul","amount":[{"denom":"uxion","amount":"777000"}]}]}`}},
	},
	{
		// h55 "feegrant grant (periodic) alice->AA1 period=3600 period_limit=100000uxion":
		// x/feegrant decoded through cosmossdk.io/api
		net: "xion", hash: "38C8414F1292090952747BAC671CCBEA7E0A7AA0265567647D91998AB6CFC144", height: 55, index: 0,
		gasWanted: 90871, gasUsed: 75660,
		fee: []chains.Coin{{Denom: "uxion", Amount: "91"}}, feePayer: "xion1vffmlw0fsu5qm74naejhcxv20zewlkgum5yegf",
		signers: []string{"xion1vffmlw0fsu5qm74naejhcxv20zewlkgum5yegf"},
		msgs:    []msgWant{{"/cosmos.feegrant.v1beta1.MsgGrantAllowance", `{"granter":"xion1vffmlw0fsu5qm74naejhcxv20zewlkgum5yegf","grantee":"xion1v8x38xfzt8qrc2lnzn78lqrnmgydcalvwzqh3768plq3kn6hey5qlew8ul","allowance":{"@type":"/cosmos.feegrant.v1beta1.PeriodicAllowance","basic":{"spend_limit":[],"expiration":null},"period":"3600s","period_spend_limit":[{"denom":"uxion","amount":"100000"}],"period_can_spend":[{"denom":"uxion","amount":"100000"}],"period_reset":"2026-11-21T23:06:09.186158674Z"}}`}},
	},
	{
		// #3 "bank send val1 {to: erin, amount: 25000000uatom}"
		net: "cosmoshub", hash: "D5B3046CB04E2D95F567826D0B0C1DD3B9BF8082B29571D19364A8C748A85B2A", height: 19, index: 2,
		gasWanted: 200000, gasUsed: 117006,
		fee: []chains.Coin{{Denom: "uatom", Amount: "1201"}}, feePayer: "cosmos1jcqf85z23w8ftaazfeee7xws3mrrw02sd4f474",
		signers: []string{"cosmos1jcqf85z23w8ftaazfeee7xws3mrrw02sd4f474"},
		msgs:    []msgWant{{"/cosmos.bank.v1beta1.MsgSend", `{"from_address":"cosmos1jcqf85z23w8ftaazfeee7xws3mrrw02sd4f474","to_address":"cosmos10edg73n2nkqg4ncp4lm2xs9y7p6cahupqgflaj","amount":[{"denom":"uatom","amount":"25000000"}]}`}},
	},
	{
		// #4 "staking delegate alice {validator: val1, amount: 1500000000uatom}"
		net: "cosmoshub", hash: "E1D3336372C2956E761C1E324CB6A3635B100F6C6C514FDDCF57BF3C73E710A2", height: 20, index: 0,
		gasWanted: 350000, gasUsed: 189987,
		fee: []chains.Coin{{Denom: "uatom", Amount: "2101"}}, feePayer: "cosmos1pj78qfcdsse85ngw08ku56jy79kswgf7p2p2wy",
		signers: []string{"cosmos1pj78qfcdsse85ngw08ku56jy79kswgf7p2p2wy"},
		msgs:    []msgWant{{"/cosmos.staking.v1beta1.MsgDelegate", `{"delegator_address":"cosmos1pj78qfcdsse85ngw08ku56jy79kswgf7p2p2wy","validator_address":"cosmosvaloper1jcqf85z23w8ftaazfeee7xws3mrrw02sgpaqjx","amount":{"denom":"uatom","amount":"1500000000"}}`}},
	},
	{
		// #20 "liquid tokenize-share" (Gaia x/liquid: not an SDK module, kept raw)
		net: "cosmoshub", hash: "4869FFB541F5A7DE6C3BD621605BFFB26BADF27E6836BB1681456AB561C736BA", height: 28, index: 0,
		gasWanted: 600000, gasUsed: 412708,
		fee: []chains.Coin{{Denom: "uatom", Amount: "3601"}}, feePayer: "cosmos1pj78qfcdsse85ngw08ku56jy79kswgf7p2p2wy",
		signers: []string{"cosmos1pj78qfcdsse85ngw08ku56jy79kswgf7p2p2wy"},
		msgs:    []msgWant{{"/gaia.liquid.v1beta1.MsgTokenizeShares", `{"delegator_address":"cosmos1pj78qfcdsse85ngw08ku56jy79kswgf7p2p2wy","validator_address":"cosmosvaloper1jcqf85z23w8ftaazfeee7xws3mrrw02sgpaqjx","amount":{"denom":"uatom","amount":"400000000"},"tokenized_share_owner":"cosmos1pj78qfcdsse85ngw08ku56jy79kswgf7p2p2wy"}`}},
	},
}

func TestLocalnetTxs(t *testing.T) {
	nets := map[string]localnetWant{}
	for _, w := range localnets {
		nets[w.name] = w
	}
	for _, w := range localnetTxs {
		t.Run(w.net+"/"+w.hash[:8], func(t *testing.T) {
			n := nets[w.net]
			ln := loadLocalnet(t, n.name, n.chainID, n.prefix)
			b, err := DecodeBlock(ln.raw(w.height), ln.opts())
			if err != nil {
				t.Fatal(err)
			}
			if w.index >= len(b.Txs) {
				t.Fatalf("height %d has %d txs", w.height, len(b.Txs))
			}
			tx := b.Txs[w.index]
			if tx.Hash != w.hash || tx.Code != w.code || tx.GasWanted != w.gasWanted || tx.GasUsed != w.gasUsed ||
				tx.Memo != w.memo || tx.FeePayer != w.feePayer || tx.Undecodable {
				t.Errorf("tx = hash %s code %d gas %d/%d memo %q payer %s undecodable %v",
					tx.Hash, tx.Code, tx.GasWanted, tx.GasUsed, tx.Memo, tx.FeePayer, tx.Undecodable)
			}
			if !reflect.DeepEqual(tx.Fee, w.fee) || !reflect.DeepEqual(tx.Signers, w.signers) {
				t.Errorf("fee %v signers %v, want %v %v", tx.Fee, tx.Signers, w.fee, w.signers)
			}
			if len(tx.Messages) != len(w.msgs) {
				t.Fatalf("%d messages, want %d", len(tx.Messages), len(w.msgs))
			}
			for i, m := range tx.Messages {
				if m.Index != i || m.TypeURL != w.msgs[i].typeURL || len(m.Raw) == 0 {
					t.Errorf("msg %d: index %d type %s raw %d bytes", i, m.Index, m.TypeURL, len(m.Raw))
				}
				if w.msgs[i].json == "" {
					if m.JSON != nil {
						t.Errorf("msg %d: JSON %s, want none (kept raw)", i, m.JSON)
					}
					continue
				}
				assertJSONEqual(t, m.JSON, w.msgs[i].json)
			}
		})
	}
}

func assertJSONEqual(t *testing.T, got json.RawMessage, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("bad JSON %s: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad expected JSON %s: %v", want, err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("JSON\n got %s\nwant %s", got, want)
	}
}

// TestLocalnetSpecialTxs checks the txs that are not user txs.
func TestLocalnetSpecialTxs(t *testing.T) {
	ln := loadLocalnet(t, "dydx", "localdydxprotocol", "dydx")
	// Height 1 has no vote-extension blob: txs[0] is MsgProposedOperations,
	// injected by the proposer: no signer, no fee, gas_wanted -1.
	b1, err := DecodeBlock(ln.raw(1), ln.opts())
	if err != nil {
		t.Fatal(err)
	}
	wantTypes := []string{"/dydxprotocol.clob.MsgProposedOperations", "/dydxprotocol.bridge.MsgAcknowledgeBridges",
		"/dydxprotocol.perpetuals.MsgAddPremiumVotes", "/dydxprotocol.prices.MsgUpdateMarketPrices"}
	if len(b1.Txs) != 4 || b1.Stats.UndecodableTxs != 0 || b1.Stats.UnknownMessages != 0 {
		t.Fatalf("height 1: %d txs, stats %+v", len(b1.Txs), b1.Stats)
	}
	for i, tx := range b1.Txs {
		if tx.Undecodable || len(tx.Messages) != 1 || tx.Messages[0].TypeURL != wantTypes[i] || tx.Messages[0].JSON == nil ||
			tx.Signers != nil || tx.Fee != nil || tx.FeePayer != "" || tx.GasWanted != -1 || tx.Code != 0 {
			t.Errorf("height 1 tx %d: %+v", i, tx)
		}
	}
	// From height 2, txs[0] is the vote-extension blob.
	b2, err := DecodeBlock(ln.raw(2), ln.opts())
	if err != nil {
		t.Fatal(err)
	}
	ve := b2.Txs[0]
	var blk struct {
		Block struct {
			Data struct{ Txs [][]byte } `json:"data"`
		} `json:"block"`
	}
	if err := json.Unmarshal(ln.blocks[1], &blk); err != nil {
		t.Fatal(err)
	}
	if !ve.Undecodable || ve.Hash != TxHash(blk.Block.Data.Txs[0]) || ve.Code != 2 || ve.Codespace != "sdk" ||
		ve.Log != "tx parse error" || ve.Events != nil || ve.Messages != nil || b2.Stats.UndecodableTxs != 1 {
		t.Errorf("vote-extension blob: %+v, stats %+v", ve, b2.Stats)
	}
	if blk.Block.Data.Txs[0][0] != 0x78 { // zlib
		t.Errorf("blob starts with %#x", blk.Block.Data.Txs[0][0])
	}
	if b2.Txs[1].Undecodable || b2.Txs[1].Messages[0].TypeURL != wantTypes[0] {
		t.Errorf("height 2 tx 1: %+v", b2.Txs[1])
	}
}

var osmosisActions = map[string]int{
	"/osmosis.poolmanager.v1beta1.MsgSwapExactAmountIn":                                       155,
	"/osmosis.poolmanager.v1beta1.MsgSwapExactAmountOut":                                      81,
	"/osmosis.gamm.v1beta1.MsgSwapExactAmountIn":                                              30,
	"/cosmos.bank.v1beta1.MsgSend":                                                            28,
	"/cosmos.staking.v1beta1.MsgDelegate":                                                     20,
	"/osmosis.concentratedliquidity.v1beta1.MsgCollectSpreadRewards":                          9,
	"/osmosis.concentratedliquidity.v1beta1.MsgCreatePosition":                                8,
	"/cosmos.gov.v1.MsgVote":                                                                  6,
	"/cosmos.distribution.v1beta1.MsgWithdrawDelegatorReward":                                 4,
	"/cosmos.gov.v1.MsgSubmitProposal":                                                        3,
	"/osmosis.gamm.poolmodels.balancer.v1beta1.MsgCreateBalancerPool":                         2,
	"/osmosis.concentratedliquidity.poolmodel.concentrated.v1beta1.MsgCreateConcentratedPool": 2,
	"/osmosis.gamm.v1beta1.MsgJoinPool":                                                       2,
	"/osmosis.incentives.MsgCreateGauge":                                                      2,
	"/osmosis.lockup.MsgLockTokens":                                                           2,
	"/cosmos.staking.v1beta1.MsgBeginRedelegate":                                              2,
	"/cosmwasm.wasm.v1.MsgExecuteContract":                                                    2,
	"/osmosis.concentratedliquidity.v1beta1.MsgWithdrawPosition":                              2,
	"/cosmos.bank.v1beta1.MsgMultiSend":                                                       1,
	"/cosmos.staking.v1beta1.MsgCreateValidator":                                              1,
	"/osmosis.gamm.poolmodels.stableswap.v1beta1.MsgCreateStableswapPool":                     1,
	"/cosmos.gov.v1.MsgDeposit":                                                               1,
	"/cosmos.gov.v1.MsgVoteWeighted":                                                          1,
	"/osmosis.gamm.v1beta1.MsgJoinSwapExternAmountIn":                                         1,
	"/osmosis.concentratedliquidity.v1beta1.MsgAddToPosition":                                 1,
	"/osmosis.poolmanager.v1beta1.MsgSplitRouteSwapExactAmountIn":                             1,
	"/osmosis.poolmanager.v1beta1.MsgSplitRouteSwapExactAmountOut":                            1,
	"/osmosis.gamm.v1beta1.MsgSwapExactAmountOut":                                             1,
	"/osmosis.tokenfactory.v1beta1.MsgCreateDenom":                                            1,
	"/osmosis.tokenfactory.v1beta1.MsgMint":                                                   1,
	"/cosmos.authz.v1beta1.MsgGrant":                                                          1,
	"/osmosis.smartaccount.v1beta1.MsgAddAuthenticator":                                       1,
	"/cosmwasm.wasm.v1.MsgStoreCode":                                                          1,
	"/cosmwasm.wasm.v1.MsgInstantiateContract":                                                1,
	"/osmosis.tokenfactory.v1beta1.MsgBurn":                                                   1,
	"/osmosis.valsetpref.v1beta1.MsgSetValidatorSetPreference":                                1,
	"/cosmos.authz.v1beta1.MsgExec":                                                           1,
	"/cosmos.distribution.v1beta1.MsgSetWithdrawAddress":                                      1,
	"/osmosis.smartaccount.v1beta1.MsgRemoveAuthenticator":                                    1,
	"/cosmos.authz.v1beta1.MsgRevoke":                                                         1,
	"/osmosis.gamm.v1beta1.MsgExitPool":                                                       1,
	"/osmosis.valsetpref.v1beta1.MsgDelegateToValidatorSet":                                   1,
	"/cosmos.distribution.v1beta1.MsgWithdrawValidatorCommission":                             1,
	"/osmosis.superfluid.MsgLockAndSuperfluidDelegate":                                        1,
	"/osmosis.superfluid.MsgSuperfluidDelegate":                                               1,
	"/cosmos.staking.v1beta1.MsgUndelegate":                                                   1,
	"/osmosis.lockup.MsgBeginUnlocking":                                                       1,
	"/osmosis.concentratedliquidity.v1beta1.MsgTransferPositions":                             1,
	"/osmosis.gamm.v1beta1.MsgExitSwapShareAmountIn":                                          1,
	"/osmosis.concentratedliquidity.v1beta1.MsgCollectIncentives":                             1,
	"/osmosis.superfluid.MsgSuperfluidUndelegateAndUnbondLock":                                1,
}

var osmosisTxEventTypes = map[string]int{
	"message":                               2037,
	"coin_received":                         1683,
	"coin_spent":                            1675,
	"transfer":                              1645,
	"tx":                                    1185,
	"token_swapped":                         338,
	"withdraw_rewards":                      25,
	"delegate":                              20,
	"init_tick":                             15,
	"cross_tick":                            12,
	"coinbase":                              11,
	"collect_spread_rewards":                10,
	"create_position":                       9,
	"total_collect_spread_rewards":          9,
	"proposal_vote":                         7,
	"pool_created":                          5,
	"submit_proposal":                       5,
	"proposal_deposit":                      5,
	"burn":                                  5,
	"pool_joined":                           3,
	"withdraw_position":                     3,
	"lock_tokens":                           3,
	"remove_tick":                           2,
	"create_gauge":                          2,
	"redelegate":                            2,
	"execute":                               2,
	"wasm":                                  2,
	"pool_exited":                           2,
	"superfluid_delegate":                   2,
	"begin_unlock":                          2,
	"collect_incentives":                    2,
	"create_validator":                      1,
	"add_to_position":                       1,
	"split_route_swap_exact_amount_in":      1,
	"protorev_backrun":                      1,
	"split_route_swap_exact_amount_out":     1,
	"create_denom":                          1,
	"tf_mint":                               1,
	"cosmos.authz.v1beta1.EventGrant":       1,
	"store_code":                            1,
	"instantiate":                           1,
	"tf_burn":                               1,
	"set_withdraw_address":                  1,
	"cosmos.authz.v1beta1.EventRevoke":      1,
	"withdraw_commission":                   1,
	"unbond":                                1,
	"transfer_positions":                    1,
	"total_collect_incentives":              1,
	"superfluid_undelegate_and_unbond_lock": 1,
}

var osmosisBlockEvents = map[string]int{
	"coin_spent/BeginBlock":          196,
	"coin_received/BeginBlock":       186,
	"message/BeginBlock":             174,
	"transfer/BeginBlock":            174,
	"liveness/BeginBlock":            39,
	"token_swapped/BeginBlock":       20,
	"withdraw_rewards/BeginBlock":    18,
	"epoch_start/BeginBlock":         16,
	"burn/BeginBlock":                13,
	"epoch_end/BeginBlock":           13,
	"coin_spent/EndBlock":            10,
	"coin_received/EndBlock":         9,
	"message/EndBlock":               8,
	"transfer/EndBlock":              8,
	"commission/BeginBlock":          5,
	"rewards/BeginBlock":             5,
	"active_proposal/EndBlock":       3,
	"coinbase/BeginBlock":            3,
	"mint/BeginBlock":                3,
	"complete_redelegation/EndBlock": 2,
	"burn/EndBlock":                  1,
	"complete_unbonding/EndBlock":    1,
	"set_superfluid_asset/EndBlock":  1,
	"slash/BeginBlock":               1,
}

var osmosisFailed = []failedTx{
	{30, 0, 5, "wasm"},
	{30, 1, 5, "sdk"},
	{30, 2, 1, "undefined"},
	{30, 3, 1, "undefined"},
	{30, 4, 18, "sdk"},
	{30, 5, 11, "sdk"},
}

var dydxMsgTypes = map[string]int{
	"/dydxprotocol.clob.MsgProposedOperations":                520,
	"/dydxprotocol.bridge.MsgAcknowledgeBridges":              520,
	"/dydxprotocol.perpetuals.MsgAddPremiumVotes":             520,
	"/dydxprotocol.prices.MsgUpdateMarketPrices":              520,
	"/dydxprotocol.clob.MsgPlaceOrder":                        6,
	"/cosmos.bank.v1beta1.MsgSend":                            3,
	"/dydxprotocol.sending.MsgDepositToSubaccount":            3,
	"/dydxprotocol.sending.MsgWithdrawFromSubaccount":         2,
	"/dydxprotocol.sending.MsgCreateTransfer":                 2,
	"/cosmos.staking.v1beta1.MsgDelegate":                     2,
	"/dydxprotocol.clob.MsgCancelOrder":                       2,
	"/cosmos.staking.v1beta1.MsgUndelegate":                   1,
	"/cosmos.distribution.v1beta1.MsgWithdrawDelegatorReward": 1,
}

var dydxTxEventTypes = map[string]int{
	"message":                  2260,
	"tx":                       460,
	"coin_spent":               160,
	"coin_received":            160,
	"transfer":                 158,
	"match":                    135,
	"settled_funding":          40,
	"deposit_to_subaccount":    3,
	"withdraw_from_subaccount": 2,
	"create_transfer":          2,
	"delegate":                 2,
	"withdraw_rewards":         2,
	"unbond":                   1,
}

var dydxBlockEventTypes = map[string]int{
	"coin_spent":    519,
	"coin_received": 519,
	"transfer":      519,
	"message":       519,
	"commission":    519,
	"rewards":       519,
	"new_epoch":     115,
}

var neutronActions = map[string]int{
	"/cosmos.bank.v1beta1.MsgSend":             24,
	"/neutron.dex.MsgCancelLimitOrder":         5,
	"/neutron.dex.MsgDeposit":                  17,
	"/neutron.dex.MsgMultiHopSwap":             19,
	"/neutron.dex.MsgPlaceLimitOrder":          59,
	"/neutron.dex.MsgWithdrawFilledLimitOrder": 6,
	"/neutron.dex.MsgWithdrawal":               4,
	"CancelLimitOrder":                         5,
	"DepositLP":                                14,
	"MultihopSwap":                             19,
	"PlaceLimitOrder":                          59,
	"WithdrawLP":                               5,
	"WithdrawLimitOrder":                       6,
}

var neutronTxEventTypes = map[string]int{
	"TickUpdate":        211,
	"TrancheUserUpdate": 70,
	"burn":              4,
	"coin_received":     637,
	"coin_spent":        624,
	"coinbase":          17,
	"fee_pay":           134,
	"message":           862,
	"neutron":           208,
	"tip_pay":           134,
	"transfer":          620,
	"tx":                296,
}

var neutronBlockEvents = map[string]int{
	"TickUpdate/BeginBlock": 5,
	"burn/EndBlock":         90,
	"coin_spent/EndBlock":   90,
	"neutron/BeginBlock":    8,
}

var neutronFailed = []failedTx{
	{53, 1, 1164, "dex"},
	{70, 0, 1164, "dex"},
	{78, 1, 1164, "dex"},
	{96, 0, 1164, "dex"},
	{113, 0, 5, "sdk"},
	{114, 0, 1134, "dex"},
	{115, 0, 1104, "dex"},
	{116, 0, 1111, "dex"},
	{134, 0, 1111, "dex"},
	{136, 0, 1111, "dex"},
	{138, 0, 1111, "dex"},
	{139, 0, 1111, "dex"},
	{141, 0, 1111, "dex"},
	{143, 0, 1111, "dex"},
}

var xionActions = map[string]int{
	"/abstractaccount.v1.MsgRegisterAccount":      5,
	"/cosmos.authz.v1beta1.MsgExec":               5,
	"/cosmos.authz.v1beta1.MsgGrant":              10,
	"/cosmos.authz.v1beta1.MsgRevoke":             3,
	"/cosmos.bank.v1beta1.MsgMultiSend":           1,
	"/cosmos.bank.v1beta1.MsgSend":                27,
	"/cosmos.feegrant.v1beta1.MsgGrantAllowance":  8,
	"/cosmos.feegrant.v1beta1.MsgRevokeAllowance": 3,
	"/cosmos.staking.v1beta1.MsgDelegate":         2,
	"/cosmwasm.wasm.v1.MsgExecuteContract":        10,
	"/cosmwasm.wasm.v1.MsgStoreCode":              2,
	"/xion.jwk.v1.MsgCreateAudience":              1,
	"/xion.jwk.v1.MsgCreateAudienceClaim":         1,
}

var xionTxEventTypes = map[string]int{
	"abstractaccount.v1.EventAccountRegistered": 5,
	"coin_received":                    125,
	"coin_spent":                       123,
	"cosmos.authz.v1beta1.EventGrant":  10,
	"cosmos.authz.v1beta1.EventRevoke": 3,
	"delegate":                         2,
	"execute":                          11,
	"instantiate":                      5,
	"message":                          194,
	"revoke_feegrant":                  3,
	"set_feegrant":                     8,
	"store_code":                       2,
	"sudo":                             122,
	"transfer":                         123,
	"tx":                               252,
	"update_contract_admin":            5,
	"update_feegrant":                  4,
	"use_feegrant":                     4,
	"wasm":                             122,
	"wasm-account_emit":                2,
	"wasm-add_auth_method":             6,
	"wasm-create_abstract_account":     5,
	"wasm-remove_auth_method":          3,
}

var xionBlockEventTypes = map[string]int{
	"burn":          43,
	"coin_received": 336,
	"coin_spent":    281,
	"coinbase":      98,
	"commission":    140,
	"message":       238,
	"mint":          141,
	"rewards":       140,
	"transfer":      238,
}

var xionFailed = []failedTx{
	{19, 0, 4, "wasm"},
	{36, 0, 5, "wasm"},
	{50, 0, 2, "authz"},
	{62, 0, 38, "sdk"},
	{65, 0, 5, "sdk"},
	{78, 0, 4, "abstractaccount"},
}

var cosmoshubActions = map[string]int{
	"/cosmos.bank.v1beta1.MsgSend":                                 21,
	"/cosmos.distribution.v1beta1.MsgSetWithdrawAddress":           1,
	"/cosmos.distribution.v1beta1.MsgWithdrawDelegatorReward":      21,
	"/cosmos.distribution.v1beta1.MsgWithdrawValidatorCommission":  3,
	"/cosmos.gov.v1.MsgDeposit":                                    1,
	"/cosmos.gov.v1.MsgSubmitProposal":                             1,
	"/cosmos.gov.v1.MsgVote":                                       6,
	"/cosmos.gov.v1.MsgVoteWeighted":                               1,
	"/cosmos.staking.v1beta1.MsgBeginRedelegate":                   3,
	"/cosmos.staking.v1beta1.MsgCreateValidator":                   2,
	"/cosmos.staking.v1beta1.MsgDelegate":                          23,
	"/cosmos.staking.v1beta1.MsgUndelegate":                        7,
	"/gaia.liquid.v1beta1.MsgDisableTokenizeShares":                1,
	"/gaia.liquid.v1beta1.MsgEnableTokenizeShares":                 1,
	"/gaia.liquid.v1beta1.MsgRedeemTokensForShares":                22,
	"/gaia.liquid.v1beta1.MsgTokenizeShares":                       18,
	"/gaia.liquid.v1beta1.MsgTransferTokenizeShareRecord":          7,
	"/gaia.liquid.v1beta1.MsgWithdrawAllTokenizeShareRecordReward": 3,
	"/gaia.liquid.v1beta1.MsgWithdrawTokenizeShareRecordReward":    5,
}

var cosmoshubTxEventTypes = map[string]int{
	"burn":                           22,
	"coin_received":                  801,
	"coin_spent":                     805,
	"coinbase":                       18,
	"create_validator":               2,
	"delegate":                       23,
	"fee_pay":                        135,
	"message":                        847,
	"proposal_deposit":               2,
	"proposal_vote":                  7,
	"redeem_shares":                  22,
	"redelegate":                     3,
	"set_withdraw_address":           1,
	"submit_proposal":                2,
	"tip_pay":                        135,
	"tokenize_shares":                18,
	"transfer":                       700,
	"transfer_tokenize_share_record": 7,
	"tx":                             296,
	"unbond":                         7,
	"withdraw_commission":            3,
	"withdraw_rewards":               110,
	"withdraw_tokenize_share_reward": 17,
}

var cosmoshubBlockEvents = map[string]int{
	"active_proposal/EndBlock":       1,
	"burn/BeginBlock":                2,
	"coin_received/BeginBlock":       506,
	"coin_received/EndBlock":         9,
	"coin_spent/BeginBlock":          339,
	"coin_spent/EndBlock":            9,
	"coinbase/BeginBlock":            169,
	"commission/BeginBlock":          370,
	"complete_redelegation/EndBlock": 2,
	"complete_unbonding/EndBlock":    5,
	"liveness/BeginBlock":            198,
	"message/BeginBlock":             337,
	"message/EndBlock":               4,
	"mint/BeginBlock":                169,
	"rewards/BeginBlock":             370,
	"slash/BeginBlock":               2,
	"transfer/BeginBlock":            337,
	"transfer/EndBlock":              4,
}

var cosmoshubFailed = []failedTx{
	{72, 0, 120, "liquid"},
	{73, 0, 5, "sdk"},
	{74, 0, 101, "liquid"},
	{74, 1, 102, "liquid"},
	{74, 2, 19, "staking"},
	{76, 0, 113, "liquid"},
	{82, 0, 120, "liquid"},
	{85, 1, 32, "staking"},
	{87, 0, 113, "liquid"},
	{88, 0, 19, "staking"},
	{95, 0, 120, "liquid"},
	{135, 0, 113, "liquid"},
	{159, 1, 115, "liquid"},
}
