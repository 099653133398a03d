"""The benchmark as a Brain-Score Language plugin (``brainscore-language`` 2.3).

- :mod:`.folder`: writes the plugin folder (``contstim brainscore plugin``): the registrations,
  the benchmark, its test, the pinned requirement and the data, generated from the package's
  built datasets;
- :mod:`.plugin_source`: the text of the plugin's files;
- :mod:`.hooks`: what the plugin's benchmark calls inside Brain-Score: the sentences, surprisal
  (bits) -> natural-log probabilities, the evaluation through
  :func:`contstim_bench.driver.evaluate` (so a Brain-Score score and ``contstim evaluate`` give the
  same numbers by construction) and the values its ``Score`` carries.

Nothing here imports Brain-Score: only the plugin's own files do, inside Brain-Score's environment.
"""
