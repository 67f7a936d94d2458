"""The cache: events, segments and their facts, derived values (SQLite, disposable)."""
