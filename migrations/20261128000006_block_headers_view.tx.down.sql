DROP VIEW block_headers;
