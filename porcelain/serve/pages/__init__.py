"""The pages of `jp serve`: each module has ``page`` (HTML) and ``api`` (its JSON)."""
