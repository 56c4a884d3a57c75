// Package route holds the one table of every operation the service exposes.
//
// The table is data: method, path, group, parameters, response schema and
// credit cost. The api package registers handlers from it and the OpenAPI
// document is generated from it, so the two cannot drift apart.
package route

import (
	"strings"

	"github.com/chainlens/chainlens/config"
)

// Group is an endpoint group of the interface; each is served from its own
// base address.
type Group string

// The nine endpoint groups of the interface.
const (
	Engagement   Group = "engagement"
	Dex          Group = "dex"
	DexLens      Group = "dex_lens"
	Perp         Group = "perp"
	PerpLens     Group = "perp_lens"
	Stablecoins  Group = "stablecoins"
	Dex2         Group = "dex2"
	Staking      Group = "staking"
	SmartAccount Group = "smart_account"
)

// Groups lists every group in the order of the interface
// (config.EndpointGroups).
var Groups = func() []Group {
	out := make([]Group, len(config.EndpointGroups))
	for i, g := range config.EndpointGroups {
		out[i] = Group(g.Name)
	}
	return out
}()

// Base is the base address family of a group: groups that share a base
// address in the interface (dex and dex lens, perp and perp lens) share a
// listener, host or prefix; each group keeps its own API key scope and
// public flag.
func (g Group) Base() string {
	if base, ok := config.LensBase[string(g)]; ok {
		return base
	}
	return string(g)
}

// Bases lists every base address family.
var Bases = config.Bases

// In says where a parameter is carried.
type In string

// Parameter locations.
const (
	InPath  In = "path"
	InQuery In = "query"
)

// ParamType is the parsed type of a parameter; on the wire every value is a string.
type ParamType string

// Parameter types.
const (
	String  ParamType = "string"
	Integer ParamType = "integer"
	Number  ParamType = "number"
	Boolean ParamType = "boolean"
	Date    ParamType = "date" // YYYY-MM-DD HH:MM:SS, YYYY-MM-DD or RFC 3339
	// Denom is a Cosmos SDK denom (cosmos.ValidDenom): anything else is a
	// 400 naming the parameter, before any handler sees it.
	Denom ParamType = "denom"
	// Bech32 is a bech32 address (BIP-173: all lower or all upper case;
	// an upper-case one is lower-cased before a handler sees it). Which
	// prefix the chain's addresses have is the handler's check.
	Bech32 ParamType = "bech32"
)

// Param describes one request parameter.
type Param struct {
	Name        string
	In          In
	Type        ParamType
	Required    bool
	Multi       bool     // repeated or comma-separated
	Default     string   // as it would be written on the wire; "" = none
	Enum        []string // allowed values, case-sensitive
	Min, Max    *float64 // inclusive bounds of integer/number values
	MaxItems    int      // for Multi: most values accepted (0 = no limit)
	Description string
}

// Schema is a JSON Schema (OpenAPI 3.1) fragment describing a response.
type Schema struct {
	Type        string // object, array, string, number, integer, boolean; "" = any value
	Nullable    bool
	Description string
	Format      string
	Enum        []string
	Properties  []Property // in document order
	Items       *Schema    // for arrays
	// AdditionalProperties describes extra members of an object, e.g. the
	// per-key columns of a generic lens series or a map keyed by pool id.
	AdditionalProperties *Schema
}

// Property is one member of an object schema.
type Property struct {
	Name     string
	Schema   *Schema
	Optional bool // may be absent
}

// Operation is one row of the route table.
type Operation struct {
	Method   string // GET or POST
	Path     string // net/http ServeMux path pattern, e.g. /pools/depth/{pool_id}/current
	Group    Group
	Summary  string
	Params   []Param
	Body     *Schema // request body, POST only
	Response *Schema // the 200 response (302 for /click: nil)
	Credits  int     // credits charged per call
	// Status is the success status: 200, or 302 for the click redirect.
	Status int
	// NoAuth marks the operation as callable without a key (GET /click).
	NoAuth bool
	// Publishable marks operations usable with a publishable (pk_) key.
	Publishable bool
	// Admin marks an operation of the admin API (AdminTable): a secret
	// key with the admin scope; not metered, never cached.
	Admin bool
}

// ID is the stable identifier of the operation: its method and path, one of
// the values of ids.go.
func (o Operation) ID() ID { return ID{o.Method, o.Path} }

// ID identifies an operation by its method and path. Its fields are
// unexported so that outside this package an ID can only be one of the
// exported values of ids.go: a handler cannot bind an operation the table
// lacks.
type ID struct{ method, path string }

// String is "METHOD PATH", the operation's id in logs, metrics and OpenAPI.
func (i ID) String() string { return i.method + " " + i.path }

// Method is the operation's HTTP method.
func (i ID) Method() string { return i.method }

// Path is the operation's net/http ServeMux path pattern.
func (i ID) Path() string { return i.path }

// Pattern is the net/http ServeMux pattern of the operation.
func (o Operation) Pattern() string { return o.Method + " " + o.Path }

// Analytics reports whether the operation is a read-only analytics endpoint
// (every group but engagement); those carry freshness headers.
func (o Operation) Analytics() bool { return o.Group != Engagement }

// PathParams lists the names of the path parameters in the order of the path.
func (o Operation) PathParams() []string {
	var names []string
	for _, seg := range strings.Split(o.Path, "/") {
		if strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") {
			names = append(names, strings.TrimSuffix(strings.TrimPrefix(seg, "{"), "}"))
		}
	}
	return names
}

// Param returns the parameter with the given name, or nil.
func (o Operation) Param(name string) *Param {
	for i := range o.Params {
		if o.Params[i].Name == name {
			return &o.Params[i]
		}
	}
	return nil
}
