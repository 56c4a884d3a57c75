package route

// Engagement group ({engage_url}): campaigns, click redirects and event tracking.

// engagementOps lists the engagement operations in the order of the interface.
func engagementOps() []Operation {
	multi := get(Engagement, EngagementCampaignMulti,
		"Get the most relevant campaign for a user using addresses of different coin types",
		[]Param{
			positionIDParam(),
			{Name: "addresses", In: InQuery, Type: String, Required: true, Multi: true, MaxItems: 20,
				Description: "1 to 20 addresses of any coin type (bech32 or 0x hex)"},
		},
		Desc(Arr(campaign()), "0 or 1 campaign"))
	multi.Publishable = true

	single := get(Engagement, EngagementCampaign, "Get the most relevant campaign for an address",
		[]Param{
			pathParam("address", "wallet address, or global for non-wallet-specific ads"),
			positionIDParam(),
		},
		Desc(Arr(campaign()), "0 or 1 campaign"))
	single.Publishable = true

	click := get(Engagement, EngagementClick, "Redirect a link click",
		[]Param{
			required("url", String, "click target; must be a creatives.url stored for the campaign"),
			required("address", String, "wallet address or global"),
			required("campaign_id", String, "campaign_id of the campaign object"),
			required("audience_id", String, "audience_id of the campaign object"),
			required("position_id", String, "creatives.position_id"),
		},
		nil)
	click.Status = 302
	click.NoAuth = true

	track := Operation{Method: EngagementTrack.method, Path: EngagementTrack.path, Group: Engagement, Summary: "Track an event",
		Body: trackBody(), Response: trackAnswer(), Credits: 5, Status: 200}

	sdk := Operation{Method: EngagementSDKTrack.method, Path: EngagementSDKTrack.path, Group: Engagement,
		Summary: "Track an event sent from the engagement client SDK",
		Body:    sdkTrackBody(), Response: trackAnswer(), Credits: 5, Status: 200, Publishable: true}

	return []Operation{multi, single, click, track, sdk}
}

// positionIDParam is the required placement of the two campaign endpoints.
func positionIDParam() Param {
	return required("position_id", String, "placement configured by the operator, e.g. keplr_home")
}

// campaign is the campaign object of the two /campaign endpoints.
func campaign() *Schema {
	return obj(
		one(P("campaign_id", Num())),
		each(Str, "campaign_owner", "campaign_name", "campaign_topic"),
		one(P("audience_id", Num())),
		each(Str, "audience_name"),
		one(
			P("address", Desc(Str(), "address the campaign was selected for, or global")),
			P("creatives", obj(
				each(Str, "position_id", "logo", "title", "body", "cta", "url"),
				one(P("banner_url", Desc(nStr(), "null for text-only ads"))),
			)),
			P("start_date", dateTime()),
			P("end_date", dateTime()),
		),
	)
}

// trackAnswer is the answer of POST /track and POST /sdk/track.
func trackAnswer() *Schema {
	return Obj(P("ok", Bool()), P("id", Desc(Str(), "event id; the first event's id for a duplicate")),
		Opt("warnings", Desc(Arr(Str()), "reserved members whose value was not of their type: the event is stored as sent and the value ignored (valuation, deduplication, attribution)")))
}

// tokenAmount is an item of the standard tokens attribute.
func tokenAmount() *Schema { return Obj(P("amount", Num()), P("denom", Str())) }

// trackBody is the tracked event, the request body of POST /track.
func trackBody() *Schema {
	return Obj(
		P("name", Desc(Str(), "event name, 1–200 characters; e.g. wallet_connected, open_position, claim_rewards")),
		P("identity", Obj(
			P("type", strEnum("address")),
			P("id", Desc(Str(), "the blockchain address")),
			Opt("canonical", Str()),
		)),
		Opt("attributes", freeObj(
			Opt("tokens", Arr(tokenAmount())),
			Opt("amount_usd", Num()),
		)),
		Opt("meta", freeObj(
			Opt("messageId", Desc(Str(), "deduplication key")),
			Opt("click_id", Desc(Str(), "click_id of a GET /click redirect")),
		)),
		P("timestamp", Desc(Any(), "number (milliseconds, or seconds when below 10^11) or ISO-8601 string")),
	)
}

// sdkTrackBody is the request body of POST /sdk/track, as sent by the client SDK.
func sdkTrackBody() *Schema {
	return Obj(
		P("name", Desc(Str(), "event name; the SDK emits page, identify, alias and custom names")),
		Opt("attributes", freeObj()),
		Opt("meta", freeObj(
			Opt("app", Any()),
			Opt("campaign", Desc(Map(Str()), "utm_* parameters without the utm_ prefix")),
			Opt("page", freeObj(
				Opt("path", Str()), Opt("referrer", Str()), Opt("search", Str()),
				Opt("title", Str()), Opt("url", Str()),
			)),
			Opt("browser", freeObj(
				Opt("userAgent", Str()), Opt("screenWidth", Num()), Opt("screenHeight", Num()),
				Opt("language", Str()), Opt("platform", Str()), Opt("locale", Str()), Opt("timezone", Str()),
			)),
			Opt("messageId", Desc(Str(), "deduplication key")),
		)),
		P("timestamp", Desc(Num(), "milliseconds since the epoch")),
		P("anonymousId", Desc(Str(), "random UUID kept by the browser")),
		Opt("userId", Desc(Str(), "wallet address set by identify")),
	)
}
