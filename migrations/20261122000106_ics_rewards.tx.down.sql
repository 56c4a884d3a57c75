DROP INDEX ibc_packets_recv_denom_idx;

--bun:split

DROP TABLE ics_reward_denoms;

--bun:split

DROP TABLE ics_rewards;
