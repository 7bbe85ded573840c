'''mdxbench.post: what happens to the suite's results after ReFrame wrote them -- the
``mdxbench`` command. One subpackage per job; each may import only the ones below it:

=============  ==========================================================  ===================
subpackage     owns                                                        imports
=============  ==========================================================  ===================
``store``      records in and out: Elasticsearch connection, ingest,       (mdxbench library)
               the records table (perflogs, Elasticsearch, Parquet),
               system events
``analysis``   computations over the records table: robust statistics,     store
               regressions, change points, proposed references,
               incidents, minimum detectable effects; returns data,
               prints nothing
``fleet``      node acceptance: per-node verdicts, one Slurm job per       store, analysis
               node, the re-measurement loop; Slurm's commands
               (``fleet.slurm``)
``site``       what people read: text tables, the HTML report, trend       store, analysis
               pages, the papers' tables (``tables.yaml``), the feed, the
               published site
``split``      was it the system or the software: an incident's previous   store, analysis, fleet
               build installed again by Spack and run beside the new one
               through Slurm, and the verdict (``incident split``)
``cycle``      the operator's loop: run, ingest, change points, incidents,  store, analysis, site,
               site, notify (``mdxbench cycle``); scrontab entries          fleet, split
               (``mdxbench schedule``)
``bench``      benchmarks of mdxbench itself and of the checks' fidelity   all of the above
``commands``   one module per command: its arguments and one call          all of the above
=============  ==========================================================  ===================

``cli`` builds the parser from ``commands`` and turns errors into exit codes. The rule is
tested (tests/unit/test_layers.py).
'''
