DROP TABLE IF EXISTS node_descriptors;
