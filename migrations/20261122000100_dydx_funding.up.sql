-- dYdX funding (chain-events.md §6.3: x/perpetuals emits no events of its
-- own; the funding rate is rebuilt from what the blocks carry). Written by
-- the dydx adapter:
--   dydx_funding_params: per perpetual at genesis, what a funding tick
--     needs: default_funding_ppm, the largest |rate| its liquidity tier
--     allows (funding_rate_clamp_factor_ppm × (initial − maintenance
--     margin)), the funding-tick and funding-sample epoch durations and
--     min_num_votes_per_sample;
--   dydx_premium_votes: each non-zero vote of the proposer's
--     MsgAddPremiumVotes;
--   dydx_funding_epochs: the heights that start a funding-sample or
--     funding-tick epoch (new_epoch events).
CREATE TABLE dydx_funding_params (
    chain_id             text    NOT NULL,
    height               bigint  NOT NULL,
    perpetual_id         integer NOT NULL,
    default_funding_ppm  integer NOT NULL,
    max_abs_rate_ppm     bigint  NOT NULL,
    tick_seconds         integer NOT NULL,
    sample_seconds       integer NOT NULL,
    min_votes_per_sample integer NOT NULL,
    PRIMARY KEY (chain_id, height, perpetual_id)
) PARTITION BY RANGE (height);

--bun:split

CREATE TABLE dydx_premium_votes (
    chain_id     text    NOT NULL,
    height       bigint  NOT NULL,
    perpetual_id integer NOT NULL,
    premium_ppm  integer NOT NULL,
    PRIMARY KEY (chain_id, height, perpetual_id)
) PARTITION BY RANGE (height);

--bun:split

CREATE TABLE dydx_funding_epochs (
    chain_id text    NOT NULL,
    height   bigint  NOT NULL,
    name     text    NOT NULL CHECK (name IN ('funding-sample', 'funding-tick')),
    number   bigint  NOT NULL,
    PRIMARY KEY (chain_id, height, name)
) PARTITION BY RANGE (height);

--bun:split

-- Report table of the perp_trading job: every funding tick's 8-hour rate
-- (ppm, clamped, as the chain applied it), its premium part and the
-- funding index change it made. A tick is computed once its height is
-- aggregated and its epochs are indexed, so a chain indexed before these
-- tables existed fills them when indexed again (chainlens index --from 0).
CREATE TABLE perp_funding_ticks (
    chain_id     text        NOT NULL,
    height       bigint      NOT NULL,
    perpetual_id integer     NOT NULL,
    time         timestamptz NOT NULL,
    rate_ppm     bigint      NOT NULL,
    premium_ppm  bigint      NOT NULL,
    index_delta  numeric     NOT NULL,
    PRIMARY KEY (chain_id, perpetual_id, height)
);
CREATE INDEX perp_funding_ticks_time_idx ON perp_funding_ticks (chain_id, perpetual_id, time);
