'''The ``mdxbench`` commands, one module per command (asv's model): each defines ``NAME``,
``HELP``, ``add_arguments(parser)`` and ``run(**options)``, which calls the job's
functions (store, analysis, fleet, site, bench) and returns the exit code. ``run`` takes
keyword arguments only, named as the parser's destinations, and its signature holds every
default (the parser takes them from it: :func:`mdxbench.post.arguments.defaults`): a command is called from
Python or a test as ``summary.run(paths=[...], no_es=True)``, no parser needed (asv's
``Command.run``). No module here loops over records or nodes: that logic lives with its
job. Options several commands share are in :mod:`.options`.'''
from mdxbench.post.commands import (accept, acceptance, bench, changes, cycle, event, export,
                                    fidelity, history, incident, ingest, references, regress, report,
                                    schedule, session, site, summary)

#: in the order ``mdxbench --help`` lists them
COMMANDS = (ingest, summary, regress, changes, event, cycle, schedule, incident, acceptance, accept,
            report, site, references, export, history, session, fidelity, bench)
