"""The operation log: the log in git, operations as data, the recorder.

Undo and restore are ``gitstore.undoing``, a floor above sync, since taking
back an operation may take back a remote's configuration too.
"""
