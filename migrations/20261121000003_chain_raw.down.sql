DROP TABLE IF EXISTS events;
--bun:split
DROP TABLE IF EXISTS messages;
--bun:split
DROP TABLE IF EXISTS txs;
--bun:split
DROP TABLE IF EXISTS blocks;
--bun:split
DROP TABLE IF EXISTS dead_letters;
--bun:split
DROP TABLE IF EXISTS sync_state;
