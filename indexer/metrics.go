// Package indexer follows chains height by height into Postgres: a parallel,
// bounded prefetch of heights, decoding through the chain kind's adapter,
// and a strictly ordered writer that commits raw rows, domain rows and the
// checkpoint in one transaction, so a crash at any moment neither loses nor
// duplicates a height. Heights that keep failing go to a dead-letter table
// and are retried later. A height whose /block_results is too large to hold
// in memory (an Osmosis epoch block's exceeds 100 MB) takes a lane of its
// own: read as a stream, decoded one tx or event at a time, its rows
// spilled to temporary files and committed alone, in order (stream.go).
package indexer

import (
	"fmt"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the indexer's Prometheus series, labelled by chain.
type Metrics struct {
	indexedHeight *prometheus.GaugeVec
	nodeHeight    *prometheus.GaugeVec
	lag           *prometheus.GaugeVec
	blocks        *prometheus.CounterVec
	events        *prometheus.CounterVec
	decodeErrors  *prometheus.CounterVec
	deadLetters   *prometheus.GaugeVec
	lowestDead    *prometheus.GaugeVec
	skippedTxs    *prometheus.CounterVec
	unknownMsgs   *prometheus.CounterVec
	foreignEvents *prometheus.CounterVec
	messages      *prometheus.CounterVec
	partialMsgs   *prometheus.CounterVec
	unknownTypes  *prometheus.CounterVec
}

// maxUnknownTypes bounds the type_url label values of one chain's unknown
// messages: past it they count as type_url="other" (a chain, or a spammer,
// can make up any number of type URLs).
const maxUnknownTypes = 50

// NewMetrics registers the indexer series on reg (nil: not registered).
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	chain := []string{"chain"}
	m := &Metrics{
		indexedHeight: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "chainlens_indexer_indexed_height", Help: "The checkpoint: every height through it is committed or a dead letter."}, chain),
		nodeHeight:    prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "chainlens_indexer_node_height", Help: "Latest height reported by the chain's nodes."}, chain),
		lag:           prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "chainlens_indexer_lag_blocks", Help: "Node height minus indexed height."}, chain),
		blocks:        prometheus.NewCounterVec(prometheus.CounterOpts{Name: "chainlens_indexer_blocks_total", Help: "Heights committed."}, chain),
		events:        prometheus.NewCounterVec(prometheus.CounterOpts{Name: "chainlens_indexer_events_total", Help: "Events committed."}, chain),
		decodeErrors:  prometheus.NewCounterVec(prometheus.CounterOpts{Name: "chainlens_indexer_decode_errors_total", Help: "Heights that failed to decode."}, chain),
		deadLetters:   prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "chainlens_indexer_dead_letters", Help: "Heights waiting in the dead-letter table."}, chain),
		lowestDead: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "chainlens_indexer_lowest_dead_letter_height",
			Help: "Lowest height in the dead-letter table (0: none); every height below it and through the indexed height is committed."}, chain),
		skippedTxs:  prometheus.NewCounterVec(prometheus.CounterOpts{Name: "chainlens_indexer_undecodable_txs_total", Help: "Block txs that are not cosmos txs (e.g. vote-extension blobs), skipped."}, chain),
		unknownMsgs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "chainlens_indexer_unknown_messages_total", Help: "Messages of types the chain kind does not decode, kept raw."}, chain),
		foreignEvents: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "chainlens_indexer_foreign_events_total",
			Help: "Contract events of a name the chain kind reads but not of its shape (another contract's), skipped."}, chain),
		messages: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "chainlens_indexer_messages_total",
			Help: "Tx messages committed; the share decoded is 1 - (unknown + partial) / this."}, chain),
		partialMsgs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "chainlens_indexer_partial_messages_total",
			Help: "Messages decoded without fields the descriptors lack (a newer chain version), kept raw beside their body."}, chain),
		unknownTypes: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "chainlens_indexer_unknown_message_types_total",
			Help: "Messages kept raw by type URL (at most 50 type URLs per chain; the rest are \"other\")."}, []string{"chain", "type_url"}),
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{m.indexedHeight, m.nodeHeight, m.lag, m.blocks, m.events, m.decodeErrors, m.deadLetters, m.lowestDead, m.skippedTxs, m.unknownMsgs, m.foreignEvents, m.messages, m.partialMsgs, m.unknownTypes} {
			if err := reg.Register(c); err != nil {
				return nil, fmt.Errorf("indexer metrics: %w", err)
			}
		}
	}
	return m, nil
}

// ChainSeries are one chain's indexer series, the same for every chain
// family.
type ChainSeries struct {
	IndexedHeight, NodeHeight, Lag, DeadLetters, LowestDeadLetter prometheus.Gauge
	Blocks, Events, DecodeErrors                                  prometheus.Counter
	// Cosmos chains: txs that are not cosmos txs, messages kept raw,
	// contract events of another shape, messages, messages decoded in part.
	UndecodableTxs, UnknownMessages, ForeignEvents, Messages, PartialMessages prometheus.Counter
	// UnknownType counts a message kept raw by its type URL.
	UnknownType func(typeURL string)
}

// Chain returns the series of one chain.
func (m *Metrics) Chain(id string) ChainSeries {
	return ChainSeries{
		IndexedHeight: m.indexedHeight.WithLabelValues(id), NodeHeight: m.nodeHeight.WithLabelValues(id),
		Lag: m.lag.WithLabelValues(id), DeadLetters: m.deadLetters.WithLabelValues(id), LowestDeadLetter: m.lowestDead.WithLabelValues(id),
		Blocks: m.blocks.WithLabelValues(id), Events: m.events.WithLabelValues(id), DecodeErrors: m.decodeErrors.WithLabelValues(id),
		UndecodableTxs: m.skippedTxs.WithLabelValues(id), UnknownMessages: m.unknownMsgs.WithLabelValues(id), ForeignEvents: m.foreignEvents.WithLabelValues(id),
		Messages: m.messages.WithLabelValues(id), PartialMessages: m.partialMsgs.WithLabelValues(id),
		UnknownType: m.unknownTypeCounter(id),
	}
}

// unknownTypeCounter counts one chain's unknown messages by type URL, the
// first maxUnknownTypes type URLs under their own label.
func (m *Metrics) unknownTypeCounter(chain string) func(string) {
	var mu sync.Mutex
	seen := map[string]bool{}
	return func(typeURL string) {
		mu.Lock()
		if !seen[typeURL] {
			if len(seen) >= maxUnknownTypes {
				typeURL = "other"
			} else {
				seen[typeURL] = true
			}
		}
		mu.Unlock()
		m.unknownTypes.WithLabelValues(chain, typeURL).Inc()
	}
}
