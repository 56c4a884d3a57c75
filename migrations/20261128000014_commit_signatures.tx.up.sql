-- The votes of each block's last commit (the block at height h carries the
-- commit of h-1): who signed, who voted nil, who was absent, with their
-- voting power at h-1 when the node served its validator set. Validator
-- uptime over a window is a count over (chain_id, validator, height).
CREATE TABLE commit_signatures (
    chain_id        text     NOT NULL,
    height          bigint   NOT NULL,  -- the block carrying the commit
    validator_index integer  NOT NULL,  -- position in the set at height - 1
    validator       text     NOT NULL,  -- upper-case hex consensus address; '' for an absent vote when the set is unknown
    power           bigint,             -- voting power at height - 1; NULL when the set is unknown
    flag            smallint NOT NULL,  -- 1 absent, 2 commit, 3 nil (CometBFT BlockIDFlag)
    PRIMARY KEY (chain_id, height, validator_index)
) PARTITION BY RANGE (height);

--bun:split

CREATE INDEX commit_signatures_validator_idx ON commit_signatures (chain_id, validator, height);
