package synthcomet

import (
	"encoding/base64"
	"strconv"
	"unicode/utf8"

	abci "github.com/cometbft/cometbft/abci/types"
)

// ResultsJSON renders a /block_results result exactly as CometBFT's JSON
// (cmtjson over coretypes.ResultBlockResults) does; that encoder goes
// through gogoproto's reflection-based jsonpb for every event attribute
// and would bound generation at about a hundred blocks a second.
// TestResultsJSONIsCometBFTs checks the bytes against cmtjson's.
// params is the consensus_param_updates value, already encoded.
func ResultsJSON(height int64, txs []*abci.ExecTxResult, finalize []abci.Event, params []byte, appHash []byte) []byte {
	// About 160 bytes an attribute: one allocation for most results.
	attrs := 0
	for _, r := range txs {
		for _, e := range r.Events {
			attrs += len(e.Attributes) + 1
		}
	}
	for _, e := range finalize {
		attrs += len(e.Attributes) + 1
	}
	b := make([]byte, 0, 4096+160*attrs)
	b = append(b, `{"height":"`...)
	b = strconv.AppendInt(b, height, 10)
	b = append(b, `","txs_results":`...)
	if txs == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, r := range txs {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"code":`...)
			b = strconv.AppendUint(b, uint64(r.Code), 10)
			b = append(b, `,"data":`...)
			b = appendBytes(b, r.Data)
			b = append(b, `,"log":`...)
			b = appendString(b, r.Log)
			b = append(b, `,"info":`...)
			b = appendString(b, r.Info)
			b = append(b, `,"gas_wanted":"`...)
			b = strconv.AppendInt(b, r.GasWanted, 10)
			b = append(b, `","gas_used":"`...)
			b = strconv.AppendInt(b, r.GasUsed, 10)
			b = append(b, `","events":`...)
			b = appendEvents(b, r.Events, false)
			b = append(b, `,"codespace":`...)
			b = appendString(b, r.Codespace)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = append(b, `,"finalize_block_events":`...)
	b = appendEvents(b, finalize, true)
	b = append(b, `,"validator_updates":null,"consensus_param_updates":`...)
	b = append(b, params...)
	b = append(b, `,"app_hash":`...)
	b = appendBytes(b, appHash)
	return append(b, '}')
}

// appendEvents writes a list of events. A tx result is encoded by
// gogoproto's jsonpb with defaults emitted: every field, an empty list as
// []. The block's own events are a field of the RPC result, encoded by
// CometBFT's reflection with the struct's omitempty tags (an empty type and
// a nil attribute list are left out, a nil event list is null); their
// attributes are jsonpb's again. blockLevel chooses the second form.
func appendEvents(b []byte, events []abci.Event, blockLevel bool) []byte {
	if events == nil && blockLevel {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, e := range events {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '{')
		sep := false
		if e.Type != "" || !blockLevel {
			b = append(b, `"type":`...)
			b = appendString(b, e.Type)
			sep = true
		}
		if e.Attributes != nil || !blockLevel {
			if sep {
				b = append(b, ',')
			}
			b = append(b, `"attributes":[`...)
			for j, a := range e.Attributes {
				if j > 0 {
					b = append(b, ',')
				}
				b = append(b, `{"key":`...)
				b = appendString(b, a.Key)
				b = append(b, `,"value":`...)
				b = appendString(b, a.Value)
				b = append(b, `,"index":`...)
				b = strconv.AppendBool(b, a.Index)
				b = append(b, '}')
			}
			b = append(b, ']')
		}
		b = append(b, '}')
	}
	return append(b, ']')
}

// appendBytes is a []byte as encoding/json writes it: base64, or null.
func appendBytes(b, v []byte) []byte {
	if v == nil {
		return append(b, "null"...)
	}
	b = append(b, '"')
	b = base64.StdEncoding.AppendEncode(b, v)
	return append(b, '"')
}

// appendString quotes s as encoding/json does (HTML-safe escaping).
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20 || c == '<' || c == '>' || c == '&':
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}
