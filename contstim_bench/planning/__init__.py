"""Planning a round of the benchmark before anyone is paid (``contstim round plan``).

- :mod:`.settings`: what a plan is asked (participants, trials, effect, test, target power, ...),
  every bad value named;
- :mod:`.targets`: which model pairs the human data cannot separate (through the driver and
  :mod:`contstim_bench.benchmarks.contstim_evidence`), and their participant models;
- :mod:`.sizing`: the power grid and the sample size, by simulating the round and running the
  package's own tests on it (:mod:`contstim_bench.analysis.power`);
- :mod:`.stimuli`: which sentences: natural controversial pairs from a pool (the package's ILP)
  or synthetic pairs, and the commands (or the ``--generate`` run) that make them;
- :mod:`.plan_folder`: the plan as files (``plan.json``, ``plan.md``, the power curve, the design).
"""
