DROP TABLE IF EXISTS commit_signatures;
