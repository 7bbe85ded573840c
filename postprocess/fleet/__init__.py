'''Node acceptance: per-node verdicts of the acceptance checks (``verdicts``), one Slurm job
per node with a bounded queue (``jobs``), and a whole run with re-measurement of failed
nodes (``accept``). Imports ``store`` and ``analysis``.'''
