DROP TABLE IF EXISTS perp_validator_status;
