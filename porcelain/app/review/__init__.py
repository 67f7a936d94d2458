"""The interactive compaction review (RFD D66) on git: start, tool, finish."""
