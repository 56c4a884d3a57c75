-- Liquidity held per address (dex_lp_holdings job, aggregator/dex), the base
-- of GET /lp/v1/rewards/estimation/{bech32Address}.

-- Classic pool shares (gamm/pool/N) owned by each address: its bank balance
-- plus the shares it locked (lock_tokens, add_tokens_to_lock) minus those the
-- lockup module gave back (unlocks). Base units of shares.
CREATE TABLE osmosis_lp_holdings (
    chain_id text    NOT NULL,
    address  text    NOT NULL,
    pool_id  bigint  NOT NULL,
    shares   numeric NOT NULL,
    PRIMARY KEY (chain_id, address, pool_id)
);

--bun:split

-- Total shares of each classic pool: the sum of every bank balance.
CREATE TABLE osmosis_pool_shares (
    chain_id text    NOT NULL,
    pool_id  bigint  NOT NULL,
    total    numeric NOT NULL,
    PRIMARY KEY (chain_id, pool_id)
);

--bun:split

-- Open concentrated-liquidity positions: the created liquidity minus what
-- was withdrawn, owned by the creator.
CREATE TABLE osmosis_cl_open_positions (
    chain_id    text    NOT NULL,
    position_id bigint  NOT NULL,
    pool_id     bigint  NOT NULL,
    address     text    NOT NULL,
    lower_tick  bigint  NOT NULL,
    upper_tick  bigint  NOT NULL,
    liquidity   numeric NOT NULL,
    PRIMARY KEY (chain_id, position_id)
);

--bun:split

CREATE INDEX osmosis_cl_open_positions_address_idx ON osmosis_cl_open_positions (chain_id, address);
