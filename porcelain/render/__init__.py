"""Every text shape jp prints: output and escaping, transcripts, the op log, errors."""
