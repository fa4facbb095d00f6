"""Perception: speech to text, voice activity and end of turn, frame selection, scene describers, and the
fallback rule that assembles a turn's input with its provenance."""
