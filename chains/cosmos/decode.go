// Package cosmos decodes CometBFT heights of cosmos-sdk chains into
// chains.Block, and holds the generic cosmos-sdk adapter.
//
// The decoder is pure and tolerant: it accepts the /block and /block_results
// JSON of CometBFT 0.34, 0.37, 0.38 and 1.0 and of Sei's hybrid fork, tx
// bytes it cannot read (kept as undecodable txs), and messages whose type it
// does not know (kept raw). It fails a height only when the two responses
// are malformed JSON or disagree with each other or with the requested
// height.
package cosmos

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/bytedance/sonic"

	"github.com/chainlens/chainlens/chains"
)

// Options configures DecodeBlock and DecodeTx.
type Options struct {
	// Bech32Prefix is the account address prefix (e.g. "osmo") used for the
	// signer and fee-payer addresses derived from public keys; when it is
	// empty no address is derived (a fee payer written in the tx is kept).
	Bech32Prefix string
	// Attrs tells how event attributes are encoded; chains.AttrAuto detects
	// it per /block_results response (see DetectBase64).
	Attrs chains.AttrEncoding
	// Registry decodes known message types to JSON; when nil every message
	// is kept raw and counted in Stats.UnknownMessages.
	Registry chains.MessageDecoder
}

// ErrMismatch is wrapped by the errors DecodeBlock returns when /block,
// /block_results and the requested height (or chain id) disagree.
var ErrMismatch = errors.New("block and block_results disagree")

// ErrMalformed is wrapped by the errors DecodeBlock returns when a response
// is not the JSON of a /block or /block_results result.
var ErrMalformed = errors.New("malformed response")

// DecodeBlock decodes one fetched height: raw.Block and raw.Results are the
// JSON-RPC `result` objects of /block and /block_results.
func DecodeBlock(raw chains.RawBlock, opt Options) (*chains.Block, error) {
	h := raw.Height
	blk, out, err := decodeHeader(raw)
	if err != nil {
		return nil, err
	}
	res, err := parseResults(raw.Results, opt.Attrs)
	if err != nil {
		return nil, fmt.Errorf("height %d: /block_results: %w", h, err)
	}
	if res.height != h {
		return nil, fmt.Errorf("height %d: /block_results is for height %d: %w", h, res.height, ErrMismatch)
	}
	if len(res.txs) != len(blk.txs) {
		return nil, fmt.Errorf("height %d: /block has %d txs but /block_results has %d txs_results: %w",
			h, len(blk.txs), len(res.txs), ErrMismatch)
	}
	out.Events = res.events
	out.Stats.Base64Attributes = res.base64
	if len(blk.txs) > 0 {
		out.Txs = make([]chains.Tx, len(blk.txs))
	}
	for i, b := range blk.txs {
		out.Txs[i] = assembleTx(b, i, &res.txs[i], opt, &out.Stats)
	}
	return out, nil
}

// decodeHeader parses raw.Block, checks it against the requested height
// and chain id, and returns it with the Block of its header fields.
func decodeHeader(raw chains.RawBlock) (*decodedBlock, *chains.Block, error) {
	h := raw.Height
	blk, err := parseBlock(raw.Block)
	if err != nil {
		return nil, nil, fmt.Errorf("height %d: /block: %w", h, err)
	}
	if blk.height != h {
		return nil, nil, fmt.Errorf("height %d: /block is for height %d: %w", h, blk.height, ErrMismatch)
	}
	chainID := raw.ChainID
	if chainID == "" {
		chainID = blk.chainID
	} else if blk.chainID != "" && blk.chainID != chainID {
		return nil, nil, fmt.Errorf("height %d: /block is from chain %q, not %q: %w", h, blk.chainID, chainID, ErrMismatch)
	}
	return blk, &chains.Block{
		ChainID:      chainID,
		Height:       h,
		Hash:         blk.hash,
		Time:         blk.time,
		Proposer:     blk.proposer,
		AppHash:      blk.appHash,
		CommitHeight: blk.commitHeight,
		Signatures:   blk.signatures,
	}, nil
}

// assembleTx decodes the bytes of tx i, joins its result and counts what
// it passed over in st.
func assembleTx(b []byte, i int, r *decodedTxResult, opt Options, st *chains.Stats) chains.Tx {
	tx := DecodeTx(b, opt)
	tx.Index = i
	tx.Code = r.code
	tx.Codespace = r.codespace
	tx.Log = r.log
	tx.GasWanted = r.gasWanted
	tx.GasUsed = r.gasUsed
	tx.Events = r.events
	for j := range tx.Events {
		tx.Events[j].TxIndex = i
	}
	inferMsgIndex(&tx)
	setInvolved(&tx)
	if tx.Undecodable {
		st.UndecodableTxs++
	}
	st.Messages += len(tx.Messages)
	for _, m := range tx.Messages {
		switch {
		case m.JSON == nil:
			st.UnknownMessages++
			st.UnknownTypes = append(st.UnknownTypes, m.TypeURL)
		case m.Partial:
			st.PartialMessages++
		}
	}
	return tx
}

// inferMsgIndex numbers the events of a tx by message where the node gave
// no msg_index (cosmos-sdk before 0.50): there baseapp opens each message's
// events with a `message` event holding the message's `action`, and the
// events before the first one are the ante handler's (fee, signatures:
// -1). Messages are numbered only when those events are exactly one per
// message of the tx (a failed tx has none; an unknown layout is left as
// it is). A copy of the ante handler's events after the last message's
// (cosmos-sdk#13983) is marked Repeat.
func inferMsgIndex(tx *chains.Tx) {
	if len(tx.Events) == 0 {
		return
	}
	var starts []int
	for j := range tx.Events {
		ev := &tx.Events[j]
		if ev.MsgIndex >= 0 {
			return
		}
		if ev.Type == "message" {
			if _, ok := ev.Get("action"); ok {
				starts = append(starts, j)
			}
		}
	}
	if len(starts) == 0 {
		return
	}
	end := len(tx.Events)
	// Only the ante handler emits `tx` events (fee, acc_seq, signature): a
	// copy holding them is the repeat, not a message's own movements.
	if ante := tx.Events[:starts[0]]; len(ante) > 0 && end-len(ante) > starts[len(starts)-1] &&
		slices.ContainsFunc(ante, func(e chains.Event) bool { return e.Type == "tx" }) &&
		sameEvents(ante, tx.Events[end-len(ante):]) {
		end -= len(ante)
		for j := end; j < len(tx.Events); j++ {
			tx.Events[j].Repeat = true
		}
	}
	if len(starts) != len(tx.Messages) {
		return
	}
	msg := -1
	for j := range tx.Events[:end] {
		if msg+1 < len(starts) && starts[msg+1] == j {
			msg++
		}
		tx.Events[j].MsgIndex = msg
	}
}

// sameEvents reports whether two runs of events have the same types and
// attributes, in order.
func sameEvents(a, b []chains.Event) bool {
	for i := range a {
		if a[i].Type != b[i].Type || !slices.Equal(a[i].Attrs, b[i].Attrs) {
			return false
		}
	}
	return true
}

// decodedBlock is what DecodeBlock uses of a /block result.
type decodedBlock struct {
	chainID      string
	height       int64
	hash         string
	time         time.Time
	proposer     string
	appHash      string
	txs          [][]byte
	commitHeight int64
	signatures   []chains.CommitSig
}

// blockJSON is the tolerant shape of a /block result.
type blockJSON struct {
	BlockID struct {
		Hash looseString `json:"hash"`
	} `json:"block_id"`
	Block *struct {
		Header struct {
			ChainID         looseString `json:"chain_id"`
			Height          flexInt     `json:"height"`
			Time            looseString `json:"time"`
			AppHash         looseString `json:"app_hash"`
			ProposerAddress looseString `json:"proposer_address"`
		} `json:"header"`
		Data struct {
			Txs []looseString `json:"txs"`
		} `json:"data"`
		LastCommit *struct {
			Height     flexInt `json:"height"`
			Signatures []struct {
				BlockIDFlag      blockIDFlag `json:"block_id_flag"`
				ValidatorAddress looseString `json:"validator_address"`
			} `json:"signatures"`
		} `json:"last_commit"`
	} `json:"block"`
}

// blockIDFlag is a vote's BlockIDFlag: a number (CometBFT RPC) or its
// enum name (REST, gRPC gateway).
type blockIDFlag int

// UnmarshalJSON implements json.Unmarshaler.
func (f *blockIDFlag) UnmarshalJSON(b []byte) error {
	switch s := strings.Trim(string(b), `"`); s {
	case "BLOCK_ID_FLAG_ABSENT":
		*f = chains.FlagAbsent
	case "BLOCK_ID_FLAG_COMMIT":
		*f = chains.FlagCommit
	case "BLOCK_ID_FLAG_NIL":
		*f = chains.FlagNil
	case "BLOCK_ID_FLAG_UNKNOWN", "null", "":
		*f = 0
	default:
		n, err := strconv.Atoi(s)
		if err != nil {
			return fmt.Errorf("block_id_flag %s", b)
		}
		*f = blockIDFlag(n)
	}
	return nil
}

// parseBlock reads the fields of a /block result that a Block needs.
func parseBlock(data json.RawMessage) (*decodedBlock, error) {
	var bj blockJSON
	if err := fastJSON.Unmarshal(data, &bj); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	if bj.Block == nil {
		return nil, fmt.Errorf("%w: no block", ErrMalformed)
	}
	hd := &bj.Block.Header
	out := &decodedBlock{
		chainID:  string(hd.ChainID),
		height:   int64(hd.Height),
		hash:     strings.ToUpper(string(bj.BlockID.Hash)),
		proposer: strings.ToUpper(string(hd.ProposerAddress)),
		appHash:  strings.ToUpper(string(hd.AppHash)),
	}
	if s := string(hd.Time); s != "" {
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return nil, fmt.Errorf("%w: header time: %w", ErrMalformed, err)
		}
		out.time = t
	}
	if lc := bj.Block.LastCommit; lc != nil && len(lc.Signatures) > 0 {
		out.commitHeight = int64(lc.Height)
		out.signatures = make([]chains.CommitSig, len(lc.Signatures))
		for i, s := range lc.Signatures {
			out.signatures[i] = chains.CommitSig{Flag: int(s.BlockIDFlag), Validator: strings.ToUpper(string(s.ValidatorAddress)), Power: -1}
		}
	}
	if n := len(bj.Block.Data.Txs); n > 0 {
		out.txs = make([][]byte, n)
		for i, s := range bj.Block.Data.Txs {
			b, err := base64.StdEncoding.DecodeString(string(s))
			if err != nil {
				return nil, fmt.Errorf("%w: tx %d is not base64: %w", ErrMalformed, i, err)
			}
			out.txs[i] = b
		}
	}
	return out, nil
}

// flexInt is an int64 written as a JSON string (CometBFT's form), a JSON
// number, or null / "" (zero).
type flexInt int64

// UnmarshalJSON implements json.Unmarshaler.
func (n *flexInt) UnmarshalJSON(b []byte) error {
	s := string(b)
	if s == "null" {
		*n = 0
		return nil
	}
	if len(s) > 1 && s[0] == '"' && s[len(s)-1] == '"' && strings.IndexByte(s, '\\') < 0 {
		s = s[1 : len(s)-1]
	} else if len(s) > 0 && s[0] == '"' {
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
	}
	if s == "" {
		*n = 0
		return nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return fmt.Errorf("not an int64: %s", b)
	}
	*n = flexInt(v)
	return nil
}

// looseString is a JSON string, or "" for null; any other JSON value is kept
// as its JSON text.
type looseString string

// UnmarshalJSON implements json.Unmarshaler.
func (s *looseString) UnmarshalJSON(b []byte) error {
	switch {
	case string(b) == "null":
		*s = ""
	case len(b) > 1 && b[0] == '"' && b[len(b)-1] == '"' && bytes.IndexByte(b, '\\') < 0:
		*s = looseString(b[1 : len(b)-1]) // no escapes: the text is the value
	case len(b) > 0 && b[0] == '"':
		var v string
		if err := json.Unmarshal(b, &v); err != nil {
			return err
		}
		*s = looseString(v)
	default:
		*s = looseString(b)
	}
	return nil
}

// fastJSON decodes the large RPC results: sonic's standard-compatible
// configuration (same semantics as encoding/json, several times faster).
var fastJSON = sonic.ConfigStd
