'''The processes that scan the history and write the site a chunk at a time: how many, the
shares of work they are given, and their pool.'''
import concurrent.futures
import multiprocessing


def workers():
    '''Processes of the scan: the cores this process may use.'''
    import os

    return len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else \
        (os.cpu_count() or 1)


def shares(items, nproc, weight=lambda item: 1):
    '''``items`` in ``nproc`` contiguous shares of about equal weight.'''
    total = sum(weight(i) for i in items)
    shares, acc = [[] for _ in range(nproc)], 0
    for item in items:
        shares[min(nproc - 1, acc * nproc // max(total, 1))].append(item)
        acc += weight(item)
    return [s for s in shares if s]


class Pool:
    '''``nproc`` spawned processes (Polars' threads do not survive a fork), or None for
    one.'''
    def __init__(self, nproc):
        self.nproc, self.pool = nproc, None

    def __enter__(self):
        if self.nproc > 1:
            self.pool = concurrent.futures.ProcessPoolExecutor(
                self.nproc, mp_context=multiprocessing.get_context('spawn'))
        return self.pool

    def __exit__(self, *exc):
        if self.pool:
            self.pool.shutdown()
