package route

// Parameter sets shared by several groups. Each call returns fresh values.

// dateRange is the optional start_date/end_date pair with the default range
// of the last 30 days.
func dateRange() []Param {
	return []Param{
		query("start_date", Date, "default: 30 days before end_date"),
		query("end_date", Date, "default: now"),
	}
}

// limitParam is an optional integer limit with a default and the range 1–max.
func limitParam(def string, max float64) Param {
	return Param{Name: "limit", In: InQuery, Type: Integer, Default: def, Min: F(1), Max: F(max),
		Description: "number of rows to return"}
}

// offsetParam is the optional integer offset, default 0.
func offsetParam() Param {
	return Param{Name: "offset", In: InQuery, Type: Integer, Default: "0", Min: F(0),
		Description: "number of rows to skip"}
}
