-- Report table of the perp_trading job: what each executed governance
-- proposal paid out of the community pool (its MsgCommunityPoolSpend
-- messages, gov v1), per denom, at the height the proposal passed.
CREATE TABLE perp_community_pool_spends (
    chain_id    text        NOT NULL,
    proposal_id bigint      NOT NULL,
    height      bigint      NOT NULL,
    time        timestamptz NOT NULL,
    denom       text        NOT NULL,
    amount      numeric     NOT NULL,
    receivers   integer     NOT NULL,
    PRIMARY KEY (chain_id, proposal_id, denom)
);

--bun:split

-- The perp_trading job fills it from the indexed gov events once.
UPDATE aggregator_jobs SET watermark = 0 WHERE name = 'perp_trading';
