DROP TABLE IF EXISTS message_addresses;
