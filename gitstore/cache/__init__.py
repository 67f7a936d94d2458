"""The cache: events, segments and their facts, summaries (SQLite, disposable)."""
