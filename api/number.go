package api

import (
	"encoding/json"
	"strings"
)

// Number renders a decimal string from the database as a JSON number
// without trailing zeros, keeping every digit.
func Number(s string) json.Number {
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if s == "" || s == "-0" {
		s = "0"
	}
	return json.Number(s)
}
