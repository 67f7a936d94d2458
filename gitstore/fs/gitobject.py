"""Moved to ``gitstore.git.objects``; kept for the prune shelters (``fs.keep``,
``oplog``, ``store.notes``) until that machinery goes: delete with it."""

from gitstore.git.objects import (
    BLOB,
    BLOB_MODE,
    COMMIT,
    TREE,
    TREE_MODE,
    TreeEdit,
    commit_data,
    object_id,
    person,
)

__all__ = ["BLOB", "BLOB_MODE", "COMMIT", "TREE", "TREE_MODE", "TreeEdit", "commit_data"]
__all__ += ["object_id", "person"]
