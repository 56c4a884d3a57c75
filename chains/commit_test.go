package chains

import (
	"reflect"
	"testing"
)

// A commit's votes are in the order of the validator set they were signed
// by: the set names the absent voters and gives every vote its power, and
// a set that does not line up changes nothing.
func TestAttributeCommit(t *testing.T) {
	votes := func() []CommitSig {
		return []CommitSig{{Flag: FlagCommit, Validator: "AA", Power: -1}, {Flag: FlagAbsent, Power: -1}, {Flag: FlagNil, Validator: "CC", Power: -1}}
	}
	set := []SetMember{{"AA", 30}, {"BB", 20}, {"CC", 10}}
	tests := []struct {
		name string
		set  []SetMember
		want []CommitSig
		err  bool
	}{
		{"lines up", set, []CommitSig{{FlagCommit, "AA", 30}, {FlagAbsent, "BB", 20}, {FlagNil, "CC", 10}}, false},
		{"another length", set[:2], votes(), true},
		{"another order", []SetMember{{"CC", 10}, {"BB", 20}, {"AA", 30}}, votes(), true},
	}
	for _, tc := range tests {
		b := &Block{Height: 8, CommitHeight: 7, Signatures: votes()}
		err := b.AttributeCommit(tc.set)
		if (err != nil) != tc.err || !reflect.DeepEqual(b.Signatures, tc.want) {
			t.Errorf("%s: %+v, %v", tc.name, b.Signatures, err)
		}
	}
}
