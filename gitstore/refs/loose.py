"""``gitstore.git.refs.loose``, for the prune shelters: delete with them."""

from gitstore.git.refs.loose import move

__all__ = ["move"]
