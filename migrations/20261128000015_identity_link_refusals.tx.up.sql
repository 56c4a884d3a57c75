-- Anonymous visitors linked to more wallets than engagement.max_wallets_per_visitor
-- (a shared computer, a bot): the links refused past the bound, counted.
CREATE TABLE identity_link_refusals (
    anonymous_id text        PRIMARY KEY,
    refused      bigint      NOT NULL,
    last_refused timestamptz NOT NULL
);
