"""The file system under the store: file locks, taking over a dead writer's lock,
and disk faults told as what they are (``EnvironmentFault``).

The floor every other part of gitstore stands on for files; it imports only
``errors`` and ``lazy``.
"""
