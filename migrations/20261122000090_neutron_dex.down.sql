DROP TABLE IF EXISTS neutron_dex_tick_updates;
