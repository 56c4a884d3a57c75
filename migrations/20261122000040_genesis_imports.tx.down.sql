DROP TABLE IF EXISTS genesis_imports;
