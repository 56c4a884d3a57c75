DROP TABLE stablecoin_senders_bucket;
