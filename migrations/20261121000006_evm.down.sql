DROP TABLE IF EXISTS erc20_transfers;
--bun:split
DROP TABLE IF EXISTS evm_blocks;
