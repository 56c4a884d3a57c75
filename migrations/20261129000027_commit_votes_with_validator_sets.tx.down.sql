-- Back to a row per vote (the commit_signatures of migrations 14 and 16).

CREATE TEMP TABLE commit_signatures_moved ON COMMIT DROP AS SELECT * FROM commit_signatures;

DROP VIEW commit_signatures;

CREATE TABLE commit_signatures (
    chain_id        text     NOT NULL,
    height          bigint   NOT NULL,
    validator_index integer  NOT NULL,
    validator       text     NOT NULL,
    power           bigint,
    flag            smallint NOT NULL
) PARTITION BY LIST (chain_id);

DO $$
DECLARE
    c text;
    lo bigint;
    hi bigint;
BEGIN
    FOR c, lo, hi IN SELECT chain_id, min(height), max(height) FROM commit_votes GROUP BY chain_id LOOP
        PERFORM chainlens_chain_partitions('commit_signatures', c, lo, hi, 1000000);
    END LOOP;
END
$$;

INSERT INTO commit_signatures SELECT * FROM commit_signatures_moved;

ALTER TABLE commit_signatures ADD PRIMARY KEY (chain_id, height, validator_index);

--bun:split

CREATE INDEX commit_signatures_validator_idx ON commit_signatures (chain_id, validator, height);

--bun:split

DROP TABLE commit_votes;
DROP TABLE validator_sets;
