-- The highest height ever written for the chain: commits above it need not
-- clear old rows first (a rewound checkpoint keeps it, so rewrites still do).
ALTER TABLE sync_state ADD COLUMN high_water bigint NOT NULL DEFAULT 0;
