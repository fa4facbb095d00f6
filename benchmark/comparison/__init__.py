"""`wearsim compare`: runs set side by side, their table, and the proactive runs' rows."""
