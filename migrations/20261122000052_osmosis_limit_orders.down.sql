DROP TABLE IF EXISTS osmosis_limit_orders;
--bun:split
DROP TABLE IF EXISTS osmosis_orderbook_events;
