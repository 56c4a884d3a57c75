package protoset

import "testing"

// BenchmarkMessageJSON decodes every message of every recorded localnet
// (3,327 messages) to JSON: from descriptors (this package, with each
// chain's shipped set), and with the cosmos-sdk's compiled codec
// (codec.ProtoMarshalJSON over gogoproto types) for the messages of the
// SDK's own modules, which it alone can decode.
func BenchmarkMessageJSON(b *testing.B) {
	msgs, err := recordedMessages()
	if err != nil {
		b.Fatal(err)
	}
	regs := map[string]*Registry{}
	for _, rec := range recordings {
		if regs[rec.name], err = NewShipped(rec.set); err != nil {
			b.Fatal(err)
		}
	}
	ref := newSDKReference()
	var sdkOnly []recordedMessage
	for _, rec := range recordings {
		for _, m := range msgs[rec.name] {
			if _, err := ref.MessageJSON(m.typeURL, m.value); err == nil {
				sdkOnly = append(sdkOnly, m)
			}
		}
	}
	b.Run("descriptors/all", func(b *testing.B) {
		n := 0
		b.ReportAllocs()
		for b.Loop() {
			for _, rec := range recordings {
				r := regs[rec.name]
				for _, m := range msgs[rec.name] {
					if _, _, err := r.Decode(m.typeURL, m.value); err != nil {
						b.Fatal(err)
					}
					n++
				}
			}
		}
		b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "msgs/s")
	})
	for _, c := range []struct {
		name   string
		decode func(m recordedMessage) error
	}{
		{"descriptors/sdk-modules", func(m recordedMessage) error {
			_, _, err := regs[m.chain].Decode(m.typeURL, m.value)
			return err
		}},
		{"sdk-codec/sdk-modules", func(m recordedMessage) error {
			_, err := ref.MessageJSON(m.typeURL, m.value)
			return err
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			n := 0
			b.ReportAllocs()
			for b.Loop() {
				for _, m := range sdkOnly {
					if err := c.decode(m); err != nil {
						b.Fatal(err)
					}
					n++
				}
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "msgs/s")
		})
	}
}

// BenchmarkNewShipped builds the registry of a chain's shipped set and the
// common one, as an adapter does once at start.
func BenchmarkNewShipped(b *testing.B) {
	for b.Loop() {
		if _, err := NewShipped("osmosis"); err != nil {
			b.Fatal(err)
		}
	}
}
