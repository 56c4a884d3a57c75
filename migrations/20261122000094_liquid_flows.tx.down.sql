DROP TABLE IF EXISTS liquid_flows;
