DROP TABLE IF EXISTS liquid_provider_daily;
