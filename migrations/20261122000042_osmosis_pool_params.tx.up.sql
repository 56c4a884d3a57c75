-- From the create message: the tick spacing of concentrated-liquidity
-- pools and the exit fee of balancer and stableswap pools (NULL for other
-- pools, and for pools indexed before these columns: reindex their heights
-- with `chainlens index --msg-type <create-pool message type>`).
ALTER TABLE osmosis_pools ADD COLUMN tick_spacing bigint;

--bun:split

ALTER TABLE osmosis_pools ADD COLUMN exit_fee numeric;
