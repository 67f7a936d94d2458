"""Moved to ``gitstore.git.refs``.  ``loose`` and ``transaction`` stay here as names
for the prune shelters (``oplog``, ``store.notes``) until that machinery goes:
delete this package with it."""
