DROP TABLE IF EXISTS block_rewards;
--bun:split
DROP TABLE IF EXISTS mint_events;
--bun:split
DROP TABLE IF EXISTS ibc_denom_traces;
--bun:split
DROP TABLE IF EXISTS ibc_packets;
--bun:split
DROP TABLE IF EXISTS gov_events;
