DROP TABLE IF EXISTS identity_link_refusals;
