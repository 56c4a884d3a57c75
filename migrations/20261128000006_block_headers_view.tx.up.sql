-- One view of block headers across chain families: a chain's heights,
-- hashes and times, whatever its family (CometBFT blocks, EVM blocks).
-- Readers that need no more than that (an answer's freshness, what a job
-- reaches, a chain's first or last indexed block) read it instead of
-- choosing a family's table. Postgres plans a query on one chain as an
-- index scan of each table (a merge of both for ORDER BY height).
CREATE VIEW block_headers AS
	SELECT chain_id, height, hash, time FROM blocks
	UNION ALL
	SELECT chain_id, height, hash, time FROM evm_blocks;
