'''The history a command reads, from whichever source its options name: perflogs (the
default: the perflog directory), a Parquet export, or Elasticsearch through its local
Parquet copy (:mod:`mdxbench.post.store.history`).'''
from mdxbench.post.store import history, records


def read(paths=None, from_es=False, parquet=None, es_url=None):
    '''(table, errors) from the source a command's options name
    (:func:`mdxbench.post.store.records.source_of`); Elasticsearch through its local copy
    (:func:`mdxbench.post.store.history.read`, which says on standard error where the
    records came from).'''
    errors = []
    if from_es:
        return history.read(url=es_url)[0], errors
    return records.load(records.source_of(paths, from_es, parquet), errors), errors
