'''Benchmarks of mdxbench itself (``ingest``, ``regress``, ``changes``, ``accept``) and of
the checks against direct runs (``fidelity``): figures printed beside a baseline measured
in the same run, never timed tests. May import every other subpackage.'''
