"""git's own formats, in one floor: object bytes (``objects``), pack files
(``pack``), refs (``refs``), the git config (``config``) and the git command
line (``command``), one module per git concept.

Nothing else in jp spells git's bytes, opens a path under the git directory
that git owns (``packed-refs``, ``objects/``, ``config``) or starts a git;
``tests/unit/test_git_floor.py`` holds every other module to that.
"""
