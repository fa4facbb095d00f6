"""`wearsim probe MODEL`: one short live session against a realtime API, and the trace it writes."""
