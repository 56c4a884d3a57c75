DROP TABLE IF EXISTS ibc_packet_status;
