-- Back to scopes per base address family: dex (perp) covers its lens group.
UPDATE api_keys SET scopes = array_remove(scopes, 'dex_lens') WHERE 'dex' = ANY (scopes);

--bun:split

UPDATE api_keys SET scopes = array_remove(scopes, 'perp_lens') WHERE 'perp' = ANY (scopes);

--bun:split

UPDATE api_keys SET scopes = array_replace(array_replace(scopes, 'dex_lens', 'dex'), 'perp_lens', 'perp');
