"""`jp serve`: a read-only view of the store in a browser (docs/serve.md).

The server (`server.py`) checks every request (token, Host), re-opens the store
for each one and hands it to a page (`pages/...`) that returns HTML, or its
JSON under ``/api/...``.  Every text from the store is escaped by `html.py`;
nothing here is imported until `jp serve` runs.
"""
