package aggregator

import (
	"fmt"
	"slices"

	"github.com/chainlens/chainlens/config"
)

// RawInputs are the raw rows a job reads from one chain: events by type
// and messages by type URL. Any says the types are chosen at run time
// (campaign goals): every filter of the chain may starve it.
type RawInputs struct {
	ChainID  string
	Events   []string
	Messages []string
	Any      bool
}

// RawReader is a Job that reads the raw events or messages tables. Every
// job that does declares what it reads, so that a chain's raw filter can
// be checked against the reports it would starve.
type RawReader interface {
	RawInputs() RawInputs
}

// Starved lists, one line each, the jobs that read raw rows a chain's
// raw filter drops.
func Starved(jobs []Job, chains []config.Chain) []string {
	filters := map[string]*config.RawFilter{}
	for _, c := range chains {
		if !c.Raw.IsZero() {
			filters[c.ID] = c.Raw
		}
	}
	var out []string
	for _, j := range jobs {
		rr, ok := j.(RawReader)
		if !ok {
			continue
		}
		in := rr.RawInputs()
		f, ok := filters[in.ChainID]
		if !ok {
			continue
		}
		if in.Any {
			out = append(out, fmt.Sprintf("%s reads the messages and events its campaigns' goals name on %s: goals on types the raw filter drops never convert", j.Name(), in.ChainID))
			continue
		}
		var dropped []string
		for _, t := range in.Events {
			if !f.Events.Keeps(t) {
				dropped = append(dropped, "event "+t)
			}
		}
		for _, t := range in.Messages {
			if !f.Messages.Keeps(t) {
				dropped = append(dropped, "message "+t)
			}
		}
		if len(dropped) > 0 {
			slices.Sort(dropped)
			out = append(out, fmt.Sprintf("%s reads what the raw filter of %s drops: %v", j.Name(), in.ChainID, dropped))
		}
	}
	return out
}
