DROP TABLE dydx_fills;
