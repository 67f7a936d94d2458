"""The store: conversations as chains of event commits, and what keeps it whole."""
