DROP TABLE IF EXISTS earn_strategy_balances;
DROP TABLE IF EXISTS earn_strategy_assets;
DROP TABLE IF EXISTS earn_strategy_state;
