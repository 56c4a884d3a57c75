package api

import (
	"bytes"
	"encoding/json"
)

// SeriesRow is a generic lens series row: labels, then one column per
// value in Columns' order (JSON objects keep that order).
type SeriesRow struct {
	Labels  string
	Columns []string
	Values  []json.Number
}

// MarshalJSON writes {"labels": …, "<column>": value, …}.
func (r SeriesRow) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(`{"labels":`)
	l, err := json.Marshal(r.Labels)
	if err != nil {
		return nil, err
	}
	b.Write(l)
	for i, c := range r.Columns {
		k, err := json.Marshal(c)
		if err != nil {
			return nil, err
		}
		b.WriteByte(',')
		b.Write(k)
		b.WriteByte(':')
		b.WriteString(string(r.Values[i]))
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
