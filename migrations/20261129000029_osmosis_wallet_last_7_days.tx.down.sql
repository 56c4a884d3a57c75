DROP TABLE osmosis_wallet_7d_end;

--bun:split

DROP TABLE osmosis_wallet_7d;
