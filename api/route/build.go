package route

// Helpers that keep the table readable. They build values only; nothing here
// has behaviour.

// Str is a string schema.
func Str() *Schema { return &Schema{Type: "string"} }

// Num is a number schema.
func Num() *Schema { return &Schema{Type: "number"} }

// Int is an integer schema.
func Int() *Schema { return &Schema{Type: "integer"} }

// Bool is a boolean schema.
func Bool() *Schema { return &Schema{Type: "boolean"} }

// Any is a schema that accepts any JSON value.
func Any() *Schema { return &Schema{} }

// Null returns a copy of s that also accepts null.
func Null(s *Schema) *Schema { c := *s; c.Nullable = true; return &c }

// Desc returns a copy of s with a description.
func Desc(s *Schema, d string) *Schema { c := *s; c.Description = d; return &c }

// Arr is an array of items.
func Arr(items *Schema) *Schema { return &Schema{Type: "array", Items: items} }

// Obj is an object with the given members, all required unless made Opt.
func Obj(props ...Property) *Schema { return &Schema{Type: "object", Properties: props} }

// Map is an object whose members are free keys with values of one schema.
func Map(values *Schema) *Schema { return &Schema{Type: "object", AdditionalProperties: values} }

// Series is a generic lens series row: labels plus one numeric column per requested key.
func Series() *Schema {
	return &Schema{Type: "object", Properties: []Property{P("labels", Str())}, AdditionalProperties: Num()}
}

// NullableSeries is a generic lens series row whose values may be null
// (a value the data cannot give, such as a USD value without a price).
func NullableSeries() *Schema {
	return &Schema{Type: "object", Properties: []Property{P("labels", Str())}, AdditionalProperties: Null(Num())}
}

// P is a required object member.
func P(name string, s *Schema) Property { return Property{Name: name, Schema: s} }

// Opt is an optional object member.
func Opt(name string, s *Schema) Property { return Property{Name: name, Schema: s, Optional: true} }

// Range returns bounds for a numeric parameter.
func Range(lo, hi float64) (*float64, *float64) { return &lo, &hi }

// F returns a pointer to f, for one-sided bounds.
func F(f float64) *float64 { return &f }

// Unexported helpers for the group files; like the ones above they only
// build values.

// get is a GET operation of group g answering 200 and costing 5 credits.
func get(g Group, id ID, summary string, params []Param, resp *Schema) Operation {
	if id.method != "GET" {
		panic("route: get of " + id.String())
	}
	return Operation{Method: id.method, Path: id.path, Group: g, Summary: summary, Params: params,
		Response: resp, Credits: 5, Status: 200}
}

// withCredits returns op with another credit cost.
func withCredits(op Operation, credits int) Operation { op.Credits = credits; return op }

// pathParam is a required string path parameter.
func pathParam(name, desc string) Param {
	return Param{Name: name, In: InPath, Type: String, Required: true, Description: desc}
}

// addressPath is a path parameter holding a bech32 address.
func addressPath(name, desc string) Param {
	return Param{Name: name, In: InPath, Type: Bech32, Required: true, Description: desc}
}

// query is an optional query parameter without default, values or bounds.
func query(name string, t ParamType, desc string) Param {
	return Param{Name: name, In: InQuery, Type: t, Description: desc}
}

// required is a required query parameter without default, values or bounds.
func required(name string, t ParamType, desc string) Param {
	return Param{Name: name, In: InQuery, Type: t, Required: true, Description: desc}
}

// concat joins parameter lists into one fresh list.
func concat(lists ...[]Param) []Param {
	var out []Param
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// each is a required member with schema s() for every name.
func each(s func() *Schema, names ...string) []Property {
	out := make([]Property, len(names))
	for i, n := range names {
		out[i] = P(n, s())
	}
	return out
}

// opts is an optional member with schema s() for every name.
func opts(s func() *Schema, names ...string) []Property {
	out := make([]Property, len(names))
	for i, n := range names {
		out[i] = Opt(n, s())
	}
	return out
}

// obj is an object whose members are the lists joined in order.
func obj(lists ...[]Property) *Schema {
	var props []Property
	for _, l := range lists {
		props = append(props, l...)
	}
	return Obj(props...)
}

// one wraps members into a list for obj.
func one(props ...Property) []Property { return props }

// nNum is a number that may be null.
func nNum() *Schema { return Null(Num()) }

// nStr is a string that may be null.
func nStr() *Schema { return Null(Str()) }

// strEnum is a string with a closed set of values.
func strEnum(vals ...string) *Schema { return &Schema{Type: "string", Enum: vals} }

// dateTime is an RFC 3339 string.
func dateTime() *Schema { return &Schema{Type: "string", Format: "date-time"} }

// freeObj is an object with the given optional members and any further members.
func freeObj(props ...Property) *Schema {
	return &Schema{Type: "object", Properties: props, AdditionalProperties: Any()}
}

// seriesWith is a generic lens series row whose named numeric columns are always present.
func seriesWith(names ...string) *Schema {
	s := Series()
	s.Properties = append(s.Properties, each(Num, names...)...)
	return s
}
