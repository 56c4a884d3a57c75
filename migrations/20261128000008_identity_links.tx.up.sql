-- The identity graph of website visitors: an anonymous id (the SDK's
-- anonymousId) seen with a wallet (userId: identify, or any event carrying
-- both). Website attribution reads a visitor's anonymous events through it.
CREATE TABLE identity_links (
    anonymous_id  text        NOT NULL,
    identity_norm text        NOT NULL,  -- engagement.Normalize form of the wallet
    first_seen    timestamptz NOT NULL,  -- the earliest event timestamp that carried both
    last_seen     timestamptz NOT NULL,
    PRIMARY KEY (anonymous_id, identity_norm)
);
CREATE INDEX identity_links_identity_idx ON identity_links (identity_norm);
