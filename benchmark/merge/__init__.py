"""`wearsim merge`: shards' run dirs merged into one, with their kept media."""
