-- Report table of the perp_trading job: what left the treasury module
-- accounts (community_treasury, community_vester, rewards_treasury,
-- rewards_vester) for accounts outside them, per UTC day, destination and
-- denom (base units): trading_rewards (sent by rewards_treasury),
-- validators (to a validator's operator account), other.
CREATE TABLE perp_treasury_outflows_daily (
    chain_id    text        NOT NULL,
    day         timestamptz NOT NULL,
    destination text        NOT NULL CHECK (destination IN ('trading_rewards', 'grants', 'validators', 'other')),
    denom       text        NOT NULL,
    amount      numeric     NOT NULL,
    PRIMARY KEY (chain_id, day, destination, denom)
);
