DROP TABLE IF EXISTS sa_feegrants;
DROP TABLE IF EXISTS sa_authz_grants;
DROP TABLE IF EXISTS sa_authenticators;
DROP TABLE IF EXISTS sa_accounts;
