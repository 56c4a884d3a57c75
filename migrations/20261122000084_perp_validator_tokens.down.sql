DROP TABLE IF EXISTS perp_validator_tokens_daily;
