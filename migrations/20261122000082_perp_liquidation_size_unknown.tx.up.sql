-- A liquidation in a market missing from the genesis catalog (listed
-- later) has no known atomic resolution: its size in base units is NULL
-- rather than a number in another unit.
ALTER TABLE perp_liquidations ALTER COLUMN size DROP NOT NULL;
