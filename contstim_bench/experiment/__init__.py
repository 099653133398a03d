"""experiment layer of contstim-bench: collect human judgments in the browser.

- the design file it serves (one row per participant group x trial) is a data format:
  :mod:`contstim_bench.data.design_file`;
- :mod:`.export`: ``contstim experiment export`` (static pages from ``static/`` plus
  ``experiment.json``);
- :mod:`.store` and :mod:`.server`: ``contstim experiment serve`` (Flask app on waitress,
  SQLite in WAL mode, one transaction per response);
- :mod:`.ingest`: ``contstim experiment ingest`` (read-only, exclusion rule, new ``trials``
  dataset version).
"""
