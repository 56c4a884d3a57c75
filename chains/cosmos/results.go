package cosmos

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/chainlens/chainlens/chains"
)

// Block-level event modes.
const (
	ModeBeginBlock = "BeginBlock"
	ModeEndBlock   = "EndBlock"
)

// resultsJSON is the tolerant shape of a /block_results result, covering
// CometBFT 0.34/0.37 (begin/end lists), 0.38/1.0 (finalize list) and Sei
// (finalize list with base64 attributes and total_gas_used). Fields not
// declared here (validator_updates, consensus_param_updates, app_hash,
// total_gas_used) are opaque: their content is never interpreted.
type resultsJSON struct {
	Height              flexInt        `json:"height"`
	TxsResults          []txResultJSON `json:"txs_results"`
	BeginBlockEvents    []eventJSON    `json:"begin_block_events"`
	EndBlockEvents      []eventJSON    `json:"end_block_events"`
	FinalizeBlockEvents []eventJSON    `json:"finalize_block_events"`
}

// txResultJSON is one ResponseDeliverTx / ExecTxResult; every field may be
// missing (Sei drops zero values of failed txs).
type txResultJSON struct {
	Code      flexInt     `json:"code"`
	Log       looseString `json:"log"`
	Codespace looseString `json:"codespace"`
	GasWanted flexInt     `json:"gas_wanted"`
	GasUsed   flexInt     `json:"gas_used"`
	Events    []eventJSON `json:"events"`
}

// eventJSON is one ABCI event; `type` may be missing (seen on dYdX).
type eventJSON struct {
	Type       looseString `json:"type"`
	Attributes []attrJSON  `json:"attributes"`
}

// attrJSON is one event attribute: bytes as base64 in 0.34 and Sei, plain
// strings otherwise; a null key or value reads as "".
type attrJSON struct {
	Key   looseString `json:"key"`
	Value looseString `json:"value"`
}

// decodedResults is what DecodeBlock uses of a /block_results result.
type decodedResults struct {
	height int64
	txs    []decodedTxResult
	events []chains.Event // block-level
	base64 bool
}

type decodedTxResult struct {
	code      uint32
	codespace string
	log       string
	gasWanted int64
	gasUsed   int64
	events    []chains.Event
}

// parseResults decodes a /block_results result with the given attribute
// encoding (AttrAuto detects it for this response).
func parseResults(data json.RawMessage, enc chains.AttrEncoding) (*decodedResults, error) {
	var rj resultsJSON
	if err := fastJSON.Unmarshal(data, &rj); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	var b64 bool
	switch enc {
	case chains.AttrBase64:
		b64 = true
	case chains.AttrPlain:
		b64 = false
	default:
		b64 = detectBase64(&rj)
	}
	out := &decodedResults{height: int64(rj.Height), base64: b64}
	if n := len(rj.TxsResults); n > 0 {
		out.txs = make([]decodedTxResult, n)
	}
	for i := range rj.TxsResults {
		t, err := convertTxResult(&rj.TxsResults[i], i, b64)
		if err != nil {
			return nil, err
		}
		out.txs[i] = t
	}
	n := len(rj.BeginBlockEvents) + len(rj.EndBlockEvents) + len(rj.FinalizeBlockEvents)
	if n > 0 {
		evs := make([]chains.Event, 0, n)
		evs = convertEvents(evs, rj.BeginBlockEvents, -1, b64, ModeBeginBlock, false)
		evs = convertEvents(evs, rj.EndBlockEvents, -1, b64, ModeEndBlock, false)
		evs = convertEvents(evs, rj.FinalizeBlockEvents, -1, b64, "", true)
		out.events = evs
	}
	return out, nil
}

// convertTxResult converts tx result i.
func convertTxResult(r *txResultJSON, i int, b64 bool) (decodedTxResult, error) {
	if r.Code < 0 || r.Code > 1<<32-1 {
		return decodedTxResult{}, fmt.Errorf("%w: tx result %d: code %d out of range", ErrMalformed, i, r.Code)
	}
	return decodedTxResult{
		code:      uint32(r.Code),
		codespace: string(r.Codespace),
		log:       string(r.Log),
		gasWanted: int64(r.GasWanted),
		gasUsed:   int64(r.GasUsed),
		events:    convertEvents(nil, r.Events, i, b64, "", false),
	}, nil
}

// convertEvents appends the decoded events of in to dst. Event.Index is the
// position in dst (so block-level events are numbered across the begin, end
// and finalize lists); Mode is mode, or, when modeFromAttr is set, the value
// of the event's last `mode` attribute (SDK 0.50 appends mode=BeginBlock or
// mode=EndBlock to FinalizeBlock events).
func convertEvents(dst []chains.Event, in []eventJSON, txIndex int, b64 bool, mode string, modeFromAttr bool) []chains.Event {
	if len(in) == 0 {
		return dst
	}
	if dst == nil {
		dst = make([]chains.Event, 0, len(in))
	}
	for _, e := range in {
		ev := chains.Event{
			TxIndex:  txIndex,
			Index:    len(dst),
			MsgIndex: -1,
			Mode:     mode,
			Type:     string(e.Type),
		}
		if len(e.Attributes) > 0 {
			ev.Attrs = make([]chains.Attr, len(e.Attributes))
		}
		msgIndexSeen := false
		for j, a := range e.Attributes {
			k, v := string(a.Key), string(a.Value)
			if b64 {
				k, v = decodeB64(k), decodeB64(v)
			}
			ev.Attrs[j] = chains.Attr{Key: k, Value: v}
			switch k {
			case "msg_index":
				if !msgIndexSeen {
					msgIndexSeen = true
					if n, err := strconv.Atoi(v); err == nil && n >= 0 {
						ev.MsgIndex = n
					}
				}
			case "mode":
				if modeFromAttr {
					ev.Mode = v
				}
			}
		}
		dst = append(dst, ev)
	}
	return dst
}

// decodeB64 decodes a base64 attribute key or value; text that is not
// base64 is kept as it is.
func decodeB64(s string) string {
	if s == "" {
		return ""
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return s
	}
	return string(b)
}

// DetectBase64 reports whether the attributes of a /block_results result
// are base64-encoded (CometBFT 0.34, Sei) rather than plain strings (0.37,
// 0.38, 1.0). The heuristic: base64 iff the response has at least one
// non-empty attribute key and every non-empty key is canonical standard
// base64 (padded, strict) that decodes to printable ASCII. Plain keys such
// as "sender" or "amount" fail it (length not a multiple of 4), and keys of
// four-character multiples such as "mode" decode to non-printable bytes.
// Which block-level lists are present is not used: 0.37 has begin/end lists
// with plain attributes and Sei has a finalize list with base64 ones. A
// response without any non-empty key reads as plain (there is nothing to
// decode either way but values, which then stay as they are).
func DetectBase64(result json.RawMessage) (bool, error) {
	var rj resultsJSON
	if err := json.Unmarshal(result, &rj); err != nil {
		return false, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	return detectBase64(&rj), nil
}

func detectBase64(rj *resultsJSON) bool {
	var d b64Detector
	for i := range rj.TxsResults {
		d.add(rj.TxsResults[i].Events)
	}
	d.add(rj.BeginBlockEvents)
	d.add(rj.EndBlockEvents)
	d.add(rj.FinalizeBlockEvents)
	return d.base64()
}

// b64Detector runs DetectBase64's heuristic over the events of a response
// fed in any order.
type b64Detector struct {
	seen   bool // a non-empty key was seen
	failed bool // a non-empty key is not printable base64
}

func (d *b64Detector) add(evs []eventJSON) {
	if d.failed {
		return
	}
	for _, e := range evs {
		for _, a := range e.Attributes {
			if a.Key == "" {
				continue
			}
			d.seen = true
			if !isPrintableBase64(string(a.Key)) {
				d.failed = true
				return
			}
		}
	}
}

// base64 is the verdict over the events added so far.
func (d *b64Detector) base64() bool { return d.seen && !d.failed }

// isPrintableBase64 reports whether s is strict, padded standard base64 of
// a non-empty printable-ASCII string.
func isPrintableBase64(s string) bool {
	if len(s)%4 != 0 {
		return false
	}
	b, err := base64.StdEncoding.Strict().DecodeString(s)
	if err != nil || len(b) == 0 {
		return false
	}
	for _, c := range b {
		if c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}
