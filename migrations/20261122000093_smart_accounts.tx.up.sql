-- Report tables of the smart account group (XION), built by the
-- smart_accounts job (aggregator/smartaccounts).

-- Registered abstract accounts.
CREATE TABLE sa_accounts (
    chain_id        text   NOT NULL,
    account         text   NOT NULL,
    code_id         bigint NOT NULL,
    account_number  text,
    creator         text   NOT NULL,
    height          bigint NOT NULL,
    PRIMARY KEY (chain_id, account)
);

--bun:split

-- The current authenticators of each registered account.
CREATE TABLE sa_authenticators (
    chain_id             text   NOT NULL,
    account              text   NOT NULL,
    authenticator_index  bigint NOT NULL,
    auth_type            text   NOT NULL,
    authenticator        text   NOT NULL,
    height               bigint NOT NULL,
    PRIMARY KEY (chain_id, account, authenticator_index)
);

--bun:split

CREATE INDEX sa_authenticators_value_idx ON sa_authenticators (chain_id, authenticator);

--bun:split

-- Current authz grants (replayed from MsgGrant, MsgRevoke and the MsgExec
-- calls that spend a send or stake authorization); authorization is the
-- proto3 JSON of the Any, with its @type.
CREATE TABLE sa_authz_grants (
    chain_id       text        NOT NULL,
    granter        text        NOT NULL,
    grantee        text        NOT NULL,
    msg_type_url   text        NOT NULL,
    auth           jsonb       NOT NULL,  -- the authorization
    expiration     timestamptz,
    height         bigint      NOT NULL,
    PRIMARY KEY (chain_id, granter, grantee, msg_type_url)
);

--bun:split

CREATE INDEX sa_authz_grants_grantee_idx ON sa_authz_grants (chain_id, grantee);

--bun:split

-- Current fee allowances (replayed from MsgGrantAllowance,
-- MsgRevokeAllowance and every fee they paid).
CREATE TABLE sa_feegrants (
    chain_id    text        NOT NULL,
    granter     text        NOT NULL,
    grantee     text        NOT NULL,
    allowance   jsonb       NOT NULL,
    expiration  timestamptz,
    height      bigint      NOT NULL,
    PRIMARY KEY (chain_id, granter, grantee)
);

--bun:split

CREATE INDEX sa_feegrants_grantee_idx ON sa_feegrants (chain_id, grantee);
