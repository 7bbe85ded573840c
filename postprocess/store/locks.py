'''One process at a time on a state file: an exclusive ``flock`` on ``<state>.lock``
(ingest's state file, a system's ``incidents.json`` for ``cycle``, ``incident`` and the
split).'''
import contextlib
import errno
import fcntl
import pathlib
import sys
import time


class LockBusy(Exception):
    '''Another ingest held the state file's lock for longer than we would wait.'''


@contextlib.contextmanager
def state_lock(state_path, wait, out=sys.stderr):
    '''Hold the exclusive lock of a state file (``<state>.lock``, never removed, so every
    process locks the same inode); wait up to ``wait`` seconds for it.'''
    path = pathlib.Path(str(state_path) + '.lock')
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, 'a+') as fp:
        deadline = time.monotonic() + wait
        said = False
        while True:
            try:
                fcntl.flock(fp, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as err:
                if err.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                    raise
            if time.monotonic() >= deadline:
                raise LockBusy(f'another mdxbench ingest holds {path} (its state file is '
                               f'{state_path}); waited {wait:g}s; nothing was sent, the '
                               'perflogs keep every record: run again later')
            if not said:
                print(f'mdxbench ingest: another ingest holds {path}: waiting up to '
                      f'{wait:g}s', file=out)
                said = True
            time.sleep(0.2)
        try:
            yield
        finally:
            fcntl.flock(fp, fcntl.LOCK_UN)
