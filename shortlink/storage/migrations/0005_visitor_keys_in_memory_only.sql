-- Visitor-hash keys now live only in the server's memory, for as long as their day can
-- receive clicks. Kept in this file, next to the hashes and user agents, a key let anyone
-- holding the file (or a backup) find a visitor's IPv4 address in 2^32 guesses.
-- secure_delete (the default of many SQLite builds, not all) overwrites the dropped
-- table's pages with zeros rather than leaving the last days' keys in the free space.
PRAGMA secure_delete = ON;
DROP TABLE IF EXISTS visitor_keys;
