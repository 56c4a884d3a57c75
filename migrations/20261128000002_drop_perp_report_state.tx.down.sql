CREATE TABLE perp_report_state (
    chain_id text   PRIMARY KEY,
    height   bigint NOT NULL
);
