"""``gitstore.git.refs.transaction``, for the prune shelters: delete with them."""

from gitstore.git.refs.transaction import ANY, RefUpdate, apply, current

__all__ = ["ANY", "RefUpdate", "apply", "current"]
