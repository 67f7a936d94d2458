"""The operation log: the log in git, operations as data, the recorder, undo."""
