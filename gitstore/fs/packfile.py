"""Moved to ``gitstore.git.pack``; kept for the prune shelters (``fs.keep``,
``fs.shelters``) until that machinery goes: delete with it."""

from gitstore.git.objects import object_id
from gitstore.git.pack import assemble, install, pack_bytes, whole_entries, write

__all__ = ["assemble", "install", "object_id", "pack_bytes", "whole_entries", "write"]
