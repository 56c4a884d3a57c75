UPDATE perp_liquidations SET size = 0 WHERE size IS NULL;
ALTER TABLE perp_liquidations ALTER COLUMN size SET NOT NULL;
