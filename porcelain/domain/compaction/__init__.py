"""Non-destructive compaction (JP's RFD 064) as plain functions over event lists.

Pure domain logic, no git, model, CLI or printing:

- ``overlays``: stored ``compaction``/``compaction_reset`` events, standing overlays.
- ``projection``: the view a model is sent, with the overlays applied.
- ``bounds``, ``ranges``: range bounds and flags, resolved to 0-based turn ranges.
- ``overlap``: growth of summary ranges over the summaries they touch.
- ``rules``, ``dsl``: compaction rules from config, ``-k SPEC`` and ``-r/-t/-s``.
- ``plan``: the overlays a run of rules produces; ``timeline``: the compact report.
- ``proposal``: the review's ``propose_compaction`` tool arguments.

Import the submodules directly; this package imports nothing.
"""
