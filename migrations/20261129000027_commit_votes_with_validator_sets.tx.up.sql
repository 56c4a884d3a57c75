-- A block's last commit was stored as a row per vote (commit_signatures,
-- migration 14): with 150 validators 48 KB a block with its indexes, 2 GB
-- a day at Osmosis's block rate, more than every other table together.
-- The votes become one commit_votes row per block — the hash of the
-- validator set and one flag byte per validator index — and each distinct
-- set is stored once in validator_sets. commit_signatures stays, as a
-- view with its old columns, for the SQL written against it. The hash is
-- SHA-256 of 'address:power,address:power,...' in index order, an unknown
-- power written as nothing (indexer.setHash computes the same).

CREATE TABLE validator_sets (
    chain_id   text     NOT NULL,
    hash       bytea    NOT NULL,
    validators text[]   NOT NULL,  -- upper-case hex consensus addresses by index; '' for an absent vote when the set was not served
    powers     bigint[],           -- voting powers by index; NULL when the set was not served
    PRIMARY KEY (chain_id, hash)
);

CREATE TABLE commit_votes (
    chain_id text   NOT NULL,
    height   bigint NOT NULL,  -- the block carrying the commit (of height - 1)
    set_hash bytea  NOT NULL,  -- validator_sets.hash of the set at height - 1
    flags    bytea  NOT NULL,  -- byte i: validator i's vote, 1 absent, 2 commit, 3 nil (CometBFT BlockIDFlag)
    PRIMARY KEY (chain_id, height)
) PARTITION BY LIST (chain_id);

--bun:split

CREATE TEMP TABLE commit_votes_moved ON COMMIT DROP AS
SELECT chain_id, height,
    array_agg(validator ORDER BY validator_index) AS validators,
    CASE WHEN bool_and(power IS NOT NULL) THEN array_agg(power ORDER BY validator_index) END AS powers,
    decode(string_agg(lpad(to_hex(flag::int), 2, '0'), '' ORDER BY validator_index), 'hex') AS flags,
    sha256(convert_to(string_agg(validator || ':' || coalesce(power::text, ''), ',' ORDER BY validator_index), 'UTF8')) AS hash
FROM commit_signatures GROUP BY chain_id, height;

DO $$
DECLARE
    c text;
    lo bigint;
    hi bigint;
BEGIN
    FOR c, lo, hi IN SELECT chain_id, min(height), max(height) FROM commit_votes_moved GROUP BY chain_id LOOP
        PERFORM chainlens_chain_partitions('commit_votes', c, lo, hi, 1000000);
    END LOOP;
END
$$;

INSERT INTO validator_sets (chain_id, hash, validators, powers)
SELECT DISTINCT ON (chain_id, hash) chain_id, hash, validators, powers FROM commit_votes_moved;

INSERT INTO commit_votes (chain_id, height, set_hash, flags) SELECT chain_id, height, hash, flags FROM commit_votes_moved;

DROP TABLE commit_signatures;

CREATE VIEW commit_signatures AS
SELECT v.chain_id, v.height, i - 1 AS validator_index, s.validators[i] AS validator, s.powers[i] AS power,
    get_byte(v.flags, i - 1)::smallint AS flag
FROM commit_votes v
JOIN validator_sets s ON s.chain_id = v.chain_id AND s.hash = v.set_hash
CROSS JOIN LATERAL generate_subscripts(s.validators, 1) AS i;
