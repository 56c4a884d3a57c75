package route

// Smart account analytics group ({smart_account_url}): 4 operations.

// smartAccountOps lists the smart account operations in the order of the interface.
func smartAccountOps() []Operation {
	return []Operation{
		get(SmartAccount, SmartAccountAuthenticators, "Authenticators of an abstract account",
			[]Param{
				addressPath("smart_account", "xion1... account contract address"),
				query("auth_id", String, "keep only the authenticator with this index"),
			},
			smartAccount()),
		get(SmartAccount, SmartAccountAccountsByAuth, "Abstract accounts by authenticator",
			[]Param{authenticatorParam()},
			Obj(
				P("authenticator", Str()),
				P("smart_accounts", Arr(Obj(
					P("smart_account", Str()),
					P("code_id", nNum()),
					P("account_number", nStr()),
				))),
			)),
		get(SmartAccount, SmartAccountDetailsByAuth,
			"Abstract account details by authenticator",
			[]Param{authenticatorParam()},
			Arr(smartAccount())),
		get(SmartAccount, SmartAccountPermissions, "Smart account permissions of an address",
			[]Param{
				addressPath("address", "xion1... address"),
				{Name: "role", In: InQuery, Type: String, Required: true, Enum: []string{"granter", "grantee"},
					Description: "role of the address in the grants"},
			},
			Obj(
				P("authz", Arr(Obj(
					P("granter", Str()),
					P("grantee", Str()),
					P("authorization", Obj(P("type_url", Str()), Opt("value", protoJSON()))),
					P("expiration", Desc(nStr(), "RFC 3339")),
				))),
				P("feegrants", Arr(Obj(
					P("granter", Str()),
					P("grantee", Str()),
					P("allowance", Obj(P("type_url", nStr()), Opt("value", protoJSON()))),
				))),
			)),
	}
}

// authenticatorParam is the percent-encoded authenticator path parameter.
func authenticatorParam() Param { return pathParam("authenticator", "authenticator, percent-encoded") }

// protoJSON is a message in proto3 JSON.
func protoJSON() *Schema { return Desc(Map(Any()), "proto3 JSON") }

// smartAccount is the smart account authenticators record.
func smartAccount() *Schema {
	return Obj(
		P("smart_account", Str()),
		P("code_id", nNum()),
		P("account_number", nStr()),
		P("authenticators", Arr(Obj(
			P("type", strEnum("EthWallet", "Secp256K1", "Secp256R1", "Ed25519", "JWT", "Passkey", "Sr25519", "ZKEmail")),
			P("authenticator", Str()),
			P("authenticator_index", Num()),
		))),
	)
}
