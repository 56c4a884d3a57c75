package config

// EndpointGroup is one endpoint group of the API.
type EndpointGroup struct {
	// Name is the group's name: its API key scope and its api.groups key.
	Name string
	// Base is the base address family it is served from: a lens group
	// shares its family's listener, host or prefix (and has only its own
	// public flag); any other group is its own.
	Base string
	// Kind is the chain kind the group reads, one chain of it
	// (api.groups.<base>.chain names which when there are several); ""
	// for a group that reads no chain (engagement) or every chain of a
	// family (stablecoins: every EVM chain).
	Kind string
}

// EndpointGroups lists the groups in the order of the interface: the one
// list a new group joins. Groups, Bases, LensBase and GroupKinds, and the
// API's route groups (api/route), are read from it.
var EndpointGroups = []EndpointGroup{
	{Name: "engagement", Base: "engagement"},
	{Name: "dex", Base: "dex", Kind: "osmosis"},
	{Name: "dex_lens", Base: "dex", Kind: "osmosis"},
	{Name: "perp", Base: "perp", Kind: "dydx"},
	{Name: "perp_lens", Base: "perp", Kind: "dydx"},
	{Name: "stablecoins", Base: "stablecoins"},
	{Name: "dex2", Base: "dex2", Kind: "neutron"},
	{Name: "staking", Base: "staking", Kind: "cosmoshub"},
	{Name: "smart_account", Base: "smart_account", Kind: "xion"},
}

var (
	// Groups names the endpoint groups: API key scopes, and what
	// api.groups may make public.
	Groups = groupNames()
	// Bases names the base address families, in the order of the interface.
	Bases = baseNames()
	// LensBase maps each group that shares another's base address family
	// (a lens group) to that family.
	LensBase = lensBases()
	// GroupKinds is the chain kind each base family reads (one chain of it).
	GroupKinds = groupKinds()
)

func groupNames() []string {
	out := make([]string, len(EndpointGroups))
	for i, g := range EndpointGroups {
		out[i] = g.Name
	}
	return out
}

func baseNames() []string {
	var out []string
	for _, g := range EndpointGroups {
		if g.Base == g.Name {
			out = append(out, g.Name)
		}
	}
	return out
}

func lensBases() map[string]string {
	out := map[string]string{}
	for _, g := range EndpointGroups {
		if g.Base != g.Name {
			out[g.Name] = g.Base
		}
	}
	return out
}

func groupKinds() map[string]string {
	out := map[string]string{}
	for _, g := range EndpointGroups {
		if g.Kind != "" {
			out[g.Base] = g.Kind
		}
	}
	return out
}
