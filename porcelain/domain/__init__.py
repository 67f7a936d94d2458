"""Pure domain logic: plain functions over event lists; no git, model, CLI or printing."""
