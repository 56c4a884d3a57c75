package route

// The admin API ({engage_url}/admin): campaigns for operators, with a
// secret key of the admin scope. Not part of the interface: AdminTable
// lists these operations apart from Table.

// AdminTable lists the admin operations. They are served with the
// engagement group's base address, documented in its OpenAPI document
// (tag admin) and observed like every operation; they are neither metered
// nor cached.
func AdminTable() []Operation {
	id := Param{Name: "id", In: InPath, Type: Integer, Required: true, Min: F(1), Description: "campaign id"}
	admin := func(id ID, summary string, params []Param, body, resp *Schema) Operation {
		return Operation{Method: id.method, Path: id.path, Group: Engagement, Summary: summary, Params: params,
			Body: body, Response: resp, Status: 200, Admin: true}
	}
	file := Desc(Obj(P("audiences", Arr(Any())), P("campaigns", Arr(Any()))),
		"a campaigns file: its audiences and campaigns, as `chainlens campaigns import` reads them")
	status := Obj(P("id", Int()), P("status", Str()))
	return []Operation{
		admin(AdminListCampaigns, "List the campaigns with their status and counts", nil, nil, Arr(Any())),
		admin(AdminImportCampaigns, "Import a campaigns file (validated whole; every problem listed)", nil, file,
			Obj(P("audiences", Int()), P("campaigns", Desc(Arr(Int()), "the ids of the imported campaigns")))),
		admin(AdminExportCampaigns, "Export every campaign and audience as a campaigns file", nil, nil, file),
		admin(AdminGetCampaign, "One campaign in the import format, with its audiences", []Param{id}, nil, file),
		admin(AdminPauseCampaign, "Pause a campaign", []Param{id}, nil, status),
		admin(AdminResumeCampaign, "Resume a campaign", []Param{id}, nil, status),
		admin(AdminCampaignReport, "A campaign's report: impressions, clicks, conversions and value", []Param{id}, nil, Any()),
	}
}
