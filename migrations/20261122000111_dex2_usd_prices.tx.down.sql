DROP TABLE dex2_usd_prices;
