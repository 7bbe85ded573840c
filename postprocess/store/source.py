'''The history a command reads, from whichever source its options name: perflogs (the
default: the perflog directory), a Parquet export, or Elasticsearch through its local
Parquet copy (:mod:`mdxbench.post.store.history`).'''
import hashlib
import json
import pathlib

from mdxbench.post.store import history, records


def files(paths=None, from_es=False, parquet=None, es_url=None, system=None):
    '''(the Parquet files of the history the options name, errors): the one way a
    command that reads the whole history in bounded memory reads it, whatever the source
    (:func:`mdxbench.post.analysis.scan.find` of files, the kept scan of the site). A
    Parquet export as it is; Elasticsearch's local copy brought up to date (its partitions
    of ``system`` when given); perflogs copied into Parquet a file at a time
    (:func:`mdxbench.post.store.history.perflog_copy`, under the history copies' directory,
    again only where a perflog changed), of ``system`` when given.'''
    errors = []
    if from_es:
        return history.files(system, es_url)[0], errors
    if parquet:
        return [str(parquet)], errors
    src = records.source_of(paths)
    key = hashlib.sha256(json.dumps([sorted(str(pathlib.Path(p).resolve()) for p in src),
                                     system]).encode()).hexdigest()[:12]
    dest = history.default_base() / 'perflogs' / key
    return history.perflog_copy(src, system, dest, errors), errors
