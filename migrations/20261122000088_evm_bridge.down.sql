DROP TABLE IF EXISTS evm_bridge_transfers;
