'''The local copy of the store: every record of Elasticsearch as Parquet, one file per
partition (an index: one system, one month), so a reader does not read the past again
every night. Elasticsearch stays the system of record.

``<state>/history/<key>/`` (``key`` names the Elasticsearch URL and index prefix, so two
stores never mix) holds ``parts/<index>.parquet`` and ``manifest.json``: per partition its
:class:`~mdxbench.post.store.esread.Digest` (count, sum of values, time range, last ingest
time) and the file's size.

Every read first brings the copy up to date (:meth:`Copy.sync`), from one aggregation:

* a partition whose digest equals Elasticsearch's is current: not read;
* one with more records in Elasticsearch is *extended*: only the records ingested since
  its last ingest time (less a margin of :data:`MARGIN_MS`, duplicates dropped by record
  id) are read; by ingest time, not measurement time, so a late record is found in
  whatever month it belongs to. If the extended partition's digest still differs (a record
  stored without ``ingested_at``, a concurrent ingest), the partition is read again whole;
* a partition missing, unreadable or of another size than the manifest says is read whole;
* a partition Elasticsearch no longer has is removed.

A partition is read under a point in time and written atomically, and the manifest is
saved after each, so an interrupted sync keeps every partition it finished and the next
one reads only the rest. Elasticsearch unreachable: the copy is used as it is, and said
with its age; without a copy, :class:`Unreachable` (exit 75, naming the URL).
'''
import concurrent.futures
import dataclasses
import datetime as dt
import hashlib
import json
import pathlib
import sys
import threading
import time

from mdxbench import settings
from mdxbench.post.store import esread, records

#: an extension re-reads the records ingested this long before the partition's last
#: ingest time (clocks of several ingesting hosts; duplicates are dropped by record id)
MARGIN_MS = 10 * 60 * 1000

#: partitions read at once (each under its own point in time)
WORKERS = 2



class Unreachable(Exception):
    '''Elasticsearch cannot be read and no copy can stand in for it.'''


class CopyError(Exception):
    '''A partition of the copy that cannot be read back.'''


def index_system(system):
    '''The system as it appears in index names (``<prefix>-<system>-<yyyy.mm>``).'''
    return ''.join(c if c.isalnum() or c in '-_' else '_' for c in system.lower())


def _unavailable(err):
    '''Whether an answer of Elasticsearch says "not now" (too many requests, or a 5xx: a
    shard copy lost under a search, no master yet) rather than "never".'''
    from elasticsearch import ApiError

    return isinstance(err, ApiError) and (err.meta.status == 429 or err.meta.status >= 500)


def _short(err):
    '''An error in one line: its type and the start of its message.'''
    text = ' '.join(str(err).split())
    return f'{type(err).__name__}: {text[:200]}'


def _connection_errors():
    from elasticsearch import ConnectionError, ConnectionTimeout

    return (ConnectionError, ConnectionTimeout)


@dataclasses.dataclass
class SyncReport:
    partitions: int = 0
    current: int = 0
    extended: int = 0
    rebuilt: int = 0
    removed: int = 0
    new_records: int = 0
    offline: str = ''        # why Elasticsearch was not read (the copy used as it is)
    synced_at: str = ''
    text: str = ''           # what read() said of it

    def line(self, url, root):
        if self.offline:
            return (f'records from the local copy {root} as of {self.synced_at or "never"}: '
                    f'Elasticsearch at {url} is unreachable ({self.offline}); records '
                    f'stored since are not in it')
        return (f'records from Elasticsearch at {url} through the local copy {root}: '
                f'{self.partitions} partition(s), {self.current} current, {self.extended} '
                f'extended, {self.rebuilt} read whole, {self.removed} removed; '
                f'{self.new_records:,} record(s) read')


class Copy:
    def __init__(self, base, url, prefix, page=esread.PAGE):
        self.page = page
        self._lock = threading.Lock()      # partitions are written from two threads
        key = hashlib.sha256(f'{url}\0{prefix}'.encode()).hexdigest()[:12]
        self.root = pathlib.Path(base) / key
        self.url, self.prefix = url, prefix
        self.manifest = self._load_manifest()

    # --- files ------------------------------------------------------------------------
    def _load_manifest(self):
        p = self.root / 'manifest.json'
        if p.exists():
            try:
                m = json.loads(p.read_text())
                if m.get('url') == self.url and m.get('prefix') == self.prefix:
                    return m
            except (OSError, ValueError):
                pass            # a lost manifest: every partition is read again
        return {'url': self.url, 'prefix': self.prefix, 'parts': {}, 'synced_at': None}

    def _save_manifest(self):
        self.root.mkdir(parents=True, exist_ok=True)
        p = self.root / 'manifest.json'
        tmp = p.with_name(p.name + '.tmp')
        tmp.write_text(json.dumps(self.manifest, indent=1, sort_keys=True))
        tmp.replace(p)

    def path(self, index):
        return self.root / 'parts' / f'{index}.parquet'

    def read_part(self, index, columns=None):
        '''One partition's table; :class:`CopyError` when the file is missing or broken.'''
        import polars as pl

        try:
            return pl.read_parquet(self.path(index), columns=columns)
        except Exception as err:        # missing, truncated, not Parquet
            raise CopyError(f'{self.path(index)}: {type(err).__name__}: {err}') from None

    def _some_meta(self, index, cols, checks):
        '''One partition's table with ``meta`` read only on the records of ``checks``.'''
        import polars as pl

        d = self.read_part(index, [c for c in cols if c != 'meta']).with_row_index('_i')
        try:
            meta = pl.scan_parquet(self.path(index)).with_row_index('_i').filter(
                pl.col('check').str.split(' ').list.first().is_in(checks)) \
                .select('_i', 'meta').collect()
        except Exception as err:        # missing, truncated, not Parquet
            raise CopyError(f'{self.path(index)}: {type(err).__name__}: {err}') from None
        return d.join(meta, on='_i', how='left', maintain_order='left').drop('_i') \
            .select(cols)

    def _write_part(self, index, df):
        p = self.path(index)
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_name(p.name + '.tmp')
        df.write_parquet(tmp, statistics=True)
        entry = {'digest': esread.Digest.of_table(df).as_json(),
                 'systems': sorted(df['system'].unique().to_list())}
        with self._lock:
            tmp.replace(p)
            self.manifest['parts'][index] = dict(entry, bytes=p.stat().st_size)
            self._save_manifest()

    def _drop_part(self, index):
        with self._lock:
            self.path(index).unlink(missing_ok=True)
            self.manifest['parts'].pop(index, None)
            self._save_manifest()

    def forget(self, system=None):
        '''Mark the partitions whose files cannot be read back as missing (they are read
        again whole by the next sync).'''
        for index in self.indices(system):
            try:
                self.read_part(index)
            except CopyError:
                self.manifest['parts'].pop(index, None)
        self._save_manifest()

    def unreadable(self, system=None):
        '''The partitions whose files are not Parquet any more (their footers read: a
        reader that scans the files itself finds the rest), as :class:`CopyError` texts.'''
        import pyarrow.parquet as pq

        out = []
        for index in self.indices(system):
            try:
                pq.read_metadata(self.path(index))
            except Exception as err:        # missing, truncated, not Parquet
                out.append(f'{self.path(index)}: {type(err).__name__}: {err}')
        return out

    def _intact(self, index):
        entry = self.manifest['parts'].get(index)
        p = self.path(index)
        return entry is not None and p.exists() and p.stat().st_size == entry['bytes']

    def indices(self, system=None):
        '''The partitions of the copy (those holding ``system``'s records when given).'''
        return sorted(i for i, e in self.manifest['parts'].items()
                      if system is None or system in e['systems'])

    # --- sync ---------------------------------------------------------------------
    def pattern(self, system=None):
        return f'{self.prefix}-{index_system(system)}-*' if system else f'{self.prefix}-*'

    def sync(self, client, system=None, retry_seconds=60.0, workers=WORKERS, out=None):
        '''Bring the partitions (of ``system`` when given) up to date; a
        :class:`SyncReport`. Connection errors before anything is read: the report says
        ``offline`` (the copy as it is), or :class:`Unreachable` without a copy.'''
        rep = SyncReport(synced_at=self.manifest.get('synced_at') or '')
        try:
            es = self._retrying(lambda: esread.digests(client, self.prefix,
                                                       pattern=self.pattern(system)),
                                'the partitions\' digests', retry_seconds,
                                retry=_unavailable, connection=False)
        except _connection_errors() as err:
            if not self.indices(system):
                raise Unreachable(f'Elasticsearch at {self.url} is unreachable '
                                  f'({type(err).__name__}) and there is no local copy of '
                                  f'its records in {self.root}') from None
            rep.offline = type(err).__name__
            return rep

        mine = set(self.indices(system)) | {i for i in self.manifest['parts']
                                            if system and i.startswith(self.pattern(system)[:-1])}
        for index in sorted(mine - set(es)):
            self._drop_part(index)
            rep.removed += 1

        rep.partitions = len(es)
        todo = []
        for index, digest in sorted(es.items()):
            entry = self.manifest['parts'].get(index)
            local = esread.Digest.of_json(entry and entry['digest'])
            if self._intact(index) and digest.same(local):
                rep.current += 1
            else:
                todo.append((index, digest, local if self._intact(index) else None))

        def work(item):
            return self._bring(client, *item, retry_seconds)

        with concurrent.futures.ThreadPoolExecutor(max(1, workers)) as ex:
            for how, n in ex.map(work, todo):
                setattr(rep, how, getattr(rep, how) + 1)
                rep.new_records += n

        self.manifest['synced_at'] = dt.datetime.now(dt.timezone.utc).isoformat(
            timespec='seconds')
        rep.synced_at = self.manifest['synced_at']
        self._save_manifest()
        return rep

    def _bring(self, client, index, digest, local, retry_seconds):
        '''(``'extended'`` or ``'rebuilt'``, records read) for one partition.'''
        import polars as pl

        if local is not None and local.ingested_ms is not None and digest.count > local.count:
            since = local.ingested_ms - MARGIN_MS
            new = self._read(client, index, {'range': {'ingested_at': {
                'gte': since, 'format': 'epoch_millis'}}}, retry_seconds)
            try:
                old = self.read_part(index)
            except CopyError:
                old = None          # broken in place: read whole below
            if old is not None:
                new = new.join(old.select('record_id'), on='record_id', how='anti')
                merged = pl.concat([old, new])
                if esread.Digest.of_table(merged).same(digest):
                    self._write_part(index, merged)
                    return 'extended', new.height

        df = self._read(client, index, None, retry_seconds)
        self._write_part(index, df)
        return 'rebuilt', df.height

    def _read(self, client, index, query, retry_seconds):
        '''A partition read, tried again from its start (a new point in time) while
        Elasticsearch comes back within ``retry_seconds``; then :class:`Unreachable`.'''
        return self._retrying(lambda: esread.read_partition(client, index, query, self.page),
                              index, retry_seconds,
                              retry=lambda err: isinstance(err, esread.Interrupted))

    def _retrying(self, call, what, retry_seconds, retry, connection=True):
        '''``call()``, tried again with a growing pause (1 s, doubling, at most 10 s) while
        it fails with an error ``retry`` accepts, or a connection error (unless not
        ``connection``: then that error is the caller's at once), until ``retry_seconds``
        have passed; then :class:`Unreachable` naming ``what``.'''
        deadline = time.monotonic() + retry_seconds
        delay = 1.0
        while True:
            try:
                return call()
            except Exception as err:
                lost = isinstance(err, _connection_errors())
                if not ((lost and connection) or (not lost and retry(err))):
                    raise
                if time.monotonic() + delay > deadline:
                    raise Unreachable(f'Elasticsearch at {self.url}: reading {what} failed '
                                      f'and did not recover within {retry_seconds:g} s '
                                      f'({err}); the partitions read before are kept, run '
                                      f'again to read the rest') from None
                print(f'mdxbench: reading {what} again in {delay:g} s: {_short(err)}',
                      file=sys.stderr)
                time.sleep(delay)
                delay = min(delay * 2, 10)

    # --- read ---------------------------------------------------------------------
    def load(self, system=None, columns=None, meta_for=None):
        '''The records table of the copy (of ``system`` when given). ``meta_for``: the check
        classes (a check's name up to its parameters) whose records alone carry their
        ``meta``, null on the others: a record's provenance is about 1 KB, ten times the
        rest of it, and few readers need it.'''
        import polars as pl

        cols = list(columns or records.COLUMNS)
        if meta_for is not None and 'meta' in cols:
            parts = [self._some_meta(i, cols, list(meta_for)) for i in self.indices(system)]
        else:
            parts = [self.read_part(i, cols) for i in self.indices(system)]
        df = pl.concat(parts) if parts else records.frame([]).select(cols)
        return df.filter(pl.col('system') == system) if system else df

    # --- verify -------------------------------------------------------------------
    def verify(self, client, repair=False, system=None, retry_seconds=60.0):
        '''Each partition's digest in Elasticsearch, in the manifest and recomputed from
        its file: rows (index, es, copy, state); with ``repair`` every partition that is
        not ``ok`` is read again whole (or removed when Elasticsearch lost it).'''
        es = esread.digests(client, self.prefix, pattern=self.pattern(system))
        rows = []
        for index in sorted(set(es) | set(self.indices(system))):
            entry = self.manifest['parts'].get(index)
            listed = esread.Digest.of_json(entry and entry['digest'])
            try:
                actual = esread.Digest.of_table(self.read_part(index)) if entry else None
                state = ('missing' if entry is None else
                         'corrupt' if not actual.same(listed) else
                         'not in Elasticsearch' if index not in es else
                         'ok' if actual.same(es[index]) else 'behind')
            except CopyError:
                actual, state = None, 'unreadable'
            if repair and state != 'ok':
                if index in es:
                    self._write_part(index, self._read(client, index, None, retry_seconds))
                    state += ', read again'
                else:
                    self._drop_part(index)
                    state += ', removed'
            rows.append((index, es.get(index), actual, state))
        return rows


def default_base():
    return settings.under_state('MDXBENCH_HISTORY_DIR', 'history')


def open_copy(url=None, base=None):
    from mdxbench.post.store import esclient

    return Copy(base or default_base(), esclient.url_of(url=url), esclient.index_prefix(),
                page=esclient.page_size(default=esread.PAGE))


def _told(copy, rep, system, out):
    '''``rep`` with where the records came from (``text``, said on ``out``) and the copy's
    files of ``system`` (``files``).'''
    rep.text = rep.line(copy.url, copy.root)
    rep.files = [str(copy.path(i)) for i in copy.indices(system)]
    print(f'mdxbench: {rep.text}', file=out)
    return rep


def files(system=None, url=None, out=sys.stderr):
    '''(the copy's Parquet files of the partitions holding ``system``'s records, or of all,
    :class:`SyncReport`): the copy brought up to date as :func:`read` does, for a reader
    that scans the files itself in bounded memory instead of one table (a partition whose
    file is no Parquet any more read again, as there); where the records came from is said
    on ``out``.'''
    from mdxbench.post.store import esclient

    copy = open_copy(url)
    client = esclient.make_client(url=url, raw=True)
    rep = copy.sync(client, system)
    broken = copy.unreadable(system)
    if broken:
        if rep.offline:
            raise Unreachable(f'Elasticsearch at {copy.url} is unreachable ({rep.offline}) '
                              f'and the local copy is broken: {broken[0]}')
        print(f'mdxbench: local copy: {broken[0]}: reading it again', file=out)
        copy.forget(system)
        rep = copy.sync(client, system)
    rep = _told(copy, rep, system, out)
    return rep.files, rep


def read(system=None, url=None, out=sys.stderr, columns=None, meta_for=None):
    '''(records table, :class:`SyncReport`): the copy brought up to date from Elasticsearch
    (the one way every command reads the store); where the records came from is said on
    ``out`` (and is ``report.text``); ``report.files`` are the copy's Parquet files read. A
    partition of the copy found broken is read again. ``meta_for``: only the records of
    these check classes carry their ``meta`` (:meth:`Copy.load`).'''
    from mdxbench.post.store import esclient

    copy = open_copy(url)
    client = esclient.make_client(url=url, raw=True)
    rep = copy.sync(client, system)
    try:
        df = copy.load(system, columns, meta_for)
    except CopyError as err:
        if rep.offline:
            raise Unreachable(f'Elasticsearch at {copy.url} is unreachable '
                              f'({rep.offline}) and the local copy is broken: {err}') from None
        print(f'mdxbench: local copy: {err}: reading it again', file=out)
        copy.forget(system)
        rep = copy.sync(client, system)
        df = copy.load(system, columns, meta_for)
    return records.nightly(records.with_current_names(df)), _told(copy, rep, system, out)


def perflog_copy(paths, system, dest, errors=None):
    '''The records of ``system`` (None: of every system) in the perflogs under ``paths`` as Parquet files in
    ``dest``, one per perflog file, each read alone and again only when the file changed
    (its size and modification time, kept in ``dest/manifest.json``); files of perflogs
    gone are removed. The Parquet files, for the readers that scan files in bounded memory
    (the history read from perflogs as from the copy of Elasticsearch). ``errors``:
    unreadable lines, "file:line: reason" (every perflog read now).'''
    import polars as pl

    dest = pathlib.Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    try:
        kept = json.loads((dest / 'manifest.json').read_text())
    except (OSError, ValueError):
        kept = {}
    if kept.get('system') != system or 'files' not in kept:
        kept = {'system': system, 'files': {}}
    out, now = [], {}
    for f in records.perflog_files(paths):
        st = f.stat()
        stamp = [st.st_size, st.st_mtime_ns]
        name = hashlib.sha256(str(f).encode()).hexdigest()[:16] + '.parquet'
        now[str(f)] = {'stamp': stamp, 'name': name}
        target = dest / name
        old = kept['files'].get(str(f))
        if old is None or old['stamp'] != stamp or not target.exists():
            df = records.from_perflogs([f], errors)
            if system is not None:
                df = df.filter(pl.col('system') == system)
            tmp = target.with_name(name + '.tmp')
            df.write_parquet(tmp, statistics=True)
            tmp.replace(target)
        out.append(str(target))
    for f, old in kept['files'].items():
        if f not in now:
            (dest / old['name']).unlink(missing_ok=True)
    tmp = dest / 'manifest.json.tmp'
    tmp.write_text(json.dumps({'system': system, 'files': now}, indent=1))
    tmp.replace(dest / 'manifest.json')
    return out
