DROP TABLE state_imports;

--bun:split

DROP TABLE dydx_opening_positions;
