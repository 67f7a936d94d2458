"""Use cases: effects allowed (store, models, files); no click, no printing."""
