package cosmos

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/chainlens/chainlens/chains"
)

var ibcPacketsTable = chains.Table{Name: "ibc_packets", Columns: []string{
	"chain_id", "height", "tx_index", "event_index", "msg_index", "kind", "src_port", "src_channel", "dst_port", "dst_channel",
	"sequence", "timeout_timestamp", "denom", "amount", "sender", "receiver", "success",
}}

var ibcTracesTable = chains.Table{Name: "ibc_denom_traces", Columns: []string{
	"chain_id", "height", "tx_index", "event_index", "trace_hash", "denom",
}}

var packetKinds = map[string]string{"send_packet": "send", "recv_packet": "recv", "acknowledge_packet": "ack", "timeout_packet": "timeout"}

// ics20Data is the ICS-20 fungible token packet payload.
type ics20Data struct {
	Denom    string `json:"denom"`
	Amount   string `json:"amount"`
	Sender   string `json:"sender"`
	Receiver string `json:"receiver"`
}

// ibcRows records IBC packets with their ICS-20 payload and, for receipts
// and acknowledgements, the outcome the fungible_token_packet events give.
// Ack and timeout events carry no payload: they join their send by
// (src_channel, sequence).
func ibcRows(b *chains.Block, out *chains.Rows) error {
	for t := range b.Txs {
		tx := &b.Txs[t]
		for i := range tx.Events {
			ev := &tx.Events[i]
			if ev.Type == "denomination_trace" {
				hash, _ := ev.Get("trace_hash")
				denom, _ := ev.Get("denom")
				out.Add(ibcTracesTable.Name, b.ChainID, b.Height, ev.TxIndex, ev.Index, hash, denom)
				continue
			}
			kind, ok := packetKinds[ev.Type]
			if !ok {
				continue
			}
			seqText, _ := ev.Get("packet_sequence")
			seq, err := strconv.ParseInt(seqText, 10, 64)
			if err != nil {
				return fmt.Errorf("%s event %d of tx %d: packet_sequence %q", ev.Type, ev.Index, ev.TxIndex, seqText)
			}
			timeoutTS, _ := ev.Get("packet_timeout_timestamp")
			if _, err := strconv.ParseUint(timeoutTS, 10, 64); err != nil {
				timeoutTS = "0"
			}
			var data ics20Data
			if raw, ok := ev.Get("packet_data"); ok {
				_ = json.Unmarshal([]byte(raw), &data)
			} else if hx, ok := ev.Get("packet_data_hex"); ok {
				if bs, err := hex.DecodeString(hx); err == nil {
					_ = json.Unmarshal(bs, &data)
				}
			}
			amount := data.Amount
			if !isDigits(amount) || amount == "" {
				amount = "0"
			}
			srcPort, _ := ev.Get("packet_src_port")
			srcCh, _ := ev.Get("packet_src_channel")
			dstPort, _ := ev.Get("packet_dst_port")
			dstCh, _ := ev.Get("packet_dst_channel")
			out.Add(ibcPacketsTable.Name, b.ChainID, b.Height, ev.TxIndex, ev.Index, ev.MsgIndex, kind, srcPort, srcCh, dstPort, dstCh,
				seq, timeoutTS, data.Denom, amount, data.Sender, data.Receiver, packetOutcome(tx, ev, kind))
		}
	}
	return nil
}

// packetEventTypes are the IBC core events that open a packet's events.
var packetEventTypes = map[string]bool{"send_packet": true, "recv_packet": true, "acknowledge_packet": true, "timeout_packet": true}

// packetOutcome reads success from the fungible_token_packet events that
// follow the packet's event in the same message, up to the next packet
// event (a relayer's tx carries many packets): `success` true/false on
// receipt, or an `error` attribute on acknowledgement. nil when the events
// do not say.
func packetOutcome(tx *chains.Tx, pkt *chains.Event, kind string) any {
	if kind != "recv" && kind != "ack" {
		return nil
	}
	var result any
	for i := range tx.Events {
		ev := &tx.Events[i]
		if ev.Index <= pkt.Index {
			continue
		}
		if ev.MsgIndex != pkt.MsgIndex || packetEventTypes[ev.Type] {
			break
		}
		if ev.Type != "fungible_token_packet" {
			continue
		}
		if _, failed := ev.Get("error"); failed {
			return false
		}
		if s, ok := ev.Get("success"); ok {
			switch s {
			case "true":
				result = true
			case "false":
				return false
			default: // acknowledgement success carries the result bytes
				result = true
			}
		}
	}
	return result
}
