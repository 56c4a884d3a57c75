-- The events-by-type index leaves out the five generic high-volume types:
-- message (every message of every tx), tx (fee, acc_seq, signature),
-- coin_spent, coin_received and transfer. They are 80-93 % of the events of
-- the recorded localnets; each has a better-indexed table of its own
-- (messages, txs, balance_changes, transfers), and no aggregator looks them
-- up by type (they are read by height). Keeping them out makes the index
-- a fifth of its size and its upkeep on every indexed height as cheap.
-- A query naming any other type as a literal uses the index as before.
DROP INDEX events_type_idx;

--bun:split

CREATE INDEX events_type_idx ON events (chain_id, type, height)
    WHERE type NOT IN ('message', 'tx', 'coin_spent', 'coin_received', 'transfer');
