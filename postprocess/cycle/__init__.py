'''The operator's loop, one cycle at a time (``mdxbench cycle``): run the suite (optional),
ingest, find change points over whole histories, group them into incidents, write the
feed, and tell someone about new and reopened incidents. Imports ``store``, ``analysis``
and ``site``.'''
