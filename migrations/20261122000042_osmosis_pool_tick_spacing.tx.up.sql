-- Tick spacing of concentrated-liquidity pools from their create message
-- (NULL for other pools, and for pools indexed before this column: reindex
-- their heights with `chainlens index --msg-type
-- /osmosis.concentratedliquidity.poolmodel.concentrated.v1beta1.MsgCreateConcentratedPool`).
ALTER TABLE osmosis_pools ADD COLUMN tick_spacing bigint;
