-- Supply of the dex chain's staking token (dex_supply job): total supply
-- at each indexed tip the job reached, the amount burnt over the indexed
-- history, and the community pool (not circulating). Base units.
CREATE TABLE osmosis_supply (
    chain_id        text        NOT NULL,
    height          bigint      NOT NULL,
    time            timestamptz NOT NULL,
    denom           text        NOT NULL,
    total           numeric     NOT NULL,  -- latest supply snapshot + minted - burnt since
    burnt           numeric     NOT NULL,  -- burn events since the first indexed height
    community_pool  numeric     NOT NULL,  -- latest community pool snapshot, truncated
    snapshot_height bigint      NOT NULL,  -- the supply snapshot the total starts from
    PRIMARY KEY (chain_id, height)
);
