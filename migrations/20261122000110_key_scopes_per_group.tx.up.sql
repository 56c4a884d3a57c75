-- API key scopes are per endpoint group (nine), no longer per base address
-- family: the lens groups get scopes of their own. A key that held dex (or
-- perp) reached the lens group at the same base address; it keeps it.
UPDATE api_keys SET scopes = scopes || '{dex_lens}'::text[] WHERE 'dex' = ANY (scopes) AND NOT 'dex_lens' = ANY (scopes);

--bun:split

UPDATE api_keys SET scopes = scopes || '{perp_lens}'::text[] WHERE 'perp' = ANY (scopes) AND NOT 'perp_lens' = ANY (scopes);
