'''Records in and out: the Elasticsearch connection (``esclient``, secrets from the
environment or 0600 files), lossless ingest of perflogs (``ingest``), the records table
from perflogs, Elasticsearch or Parquet (``records``), and the system events log
(``events``). Imports only the mdxbench library.'''
