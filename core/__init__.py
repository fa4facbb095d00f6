"""The ground floor: record types, the scenario model, the seam types (candidate, judge), safe file
writing and word helpers. Imports nothing of ours outside this package; every other package may import it."""
