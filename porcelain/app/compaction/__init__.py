"""Compaction's use cases: summarize ranges with a model, run rules on a chain."""
