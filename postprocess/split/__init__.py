'''Was it the system or the software? An incident's previous build installed again by Spack
(``builds``) and run beside the new one on the same node through Slurm (``jobs``), the
verdict from the paired rounds (``verdict``), the whole split and its place on the incident
(``run``). Imports ``store``, ``analysis`` and ``fleet``.'''
