'''Perflogs into Elasticsearch: lossless, idempotent, resumable.

* One document per perflog record (one performance variable of one perflog line), with a
  deterministic id (:func:`doc_id`) and the ``create`` operation: ingesting the same files
  twice stores nothing twice (the second time the records count as *already present*).
* Indices ``<prefix>-<system>-<yyyy.mm>`` (prefix ``mdxbench-perf`` unless
  ``MDXBENCH_ES_INDEX_PREFIX`` says otherwise), created from the index template
  ``<prefix>`` whose mapping names every field (``dynamic: strict``).
* Connection errors, 429 and 5xx are retried with backoff within a bounded time; past it
  the records not acknowledged stay *pending* in the perflogs themselves (the spool), and
  the next run sends them. Items rejected inside a bulk response are retried alone and, if
  still rejected, written to the dead-letter file with the reason.
* Bulk requests are sent by a thread, the next one queued while the one before is settled
  (counted, its lines' offsets saved) and the batch after is read: Elasticsearch is never
  idle waiting for the perflogs to be parsed. Requests are settled in order.
* A state file remembers, per perflog file, the byte offset up to which Elasticsearch
  acknowledged every record, so a run after a crash sends only the rest.
* One ingest at a time per state file: a run holds an exclusive lock (``<state>.lock``,
  ``flock``) from reading the state to saving it. A second run (a cron job beside a hand
  run) waits up to ``lock_wait`` seconds, then reads the state the first one left and sends
  only what is still unsent; past the wait it exits with ``exits.LOCKED``, sending nothing.
* A last line without its newline is a record ReFrame is still writing: it is *unfinished*
  (not malformed, not an error), left in place and sent by the run that finds it complete.
* Only core Elasticsearch APIs are used (_bulk, index templates, _count, _refresh): the
  local instance of ci/ has no ingest pipelines, painless or data streams.
'''
import collections
import concurrent.futures
import contextlib
import dataclasses
import datetime as dt
import hashlib
import json
import os
import pathlib
import sys
import time

from mdxbench.post import exits
from mdxbench import perflog
from mdxbench.post.store import esclient
from mdxbench.post.store.documents import line_documents, template_body, to_document
from mdxbench.post.store.locks import state_lock
from mdxbench.post.store.records import perflog_files


@dataclasses.dataclass
class Counts:
    records: int = 0        # records read from the perflogs (this run)
    sent: int = 0           # records sent to Elasticsearch
    created: int = 0        # newly stored
    present: int = 0        # already stored before (same id)
    rejected: int = 0       # refused by Elasticsearch even alone: in the dead-letter file
    malformed: int = 0      # perflog lines that could not be read: reported, dead-lettered
    pending: int = 0        # not acknowledged (Elasticsearch unreachable): next run
    unfinished: int = 0     # last lines still being written (no newline yet): next run
    dry_run: int = 0        # lines of reframe --dry-run cases: no measurement, not sent
    retried: int = 0        # requests sent again: by the client to another node, or later

    def exit_code(self):
        if self.pending:
            return exits.PENDING

        return exits.FOUND if (self.rejected or self.malformed) else exits.OK

    def line(self):
        return ', '.join(f'{k} {v}' for k, v in dataclasses.asdict(self).items())


class _Unavailable(Exception):
    '''Elasticsearch could not take a request within the retry budget.'''


class TlsVerificationError(Exception):
    '''The server's certificate could not be verified: a configuration problem, not a
    transient one, so it is not retried.'''


class StateFile:
    '''Per perflog file: identity and the acknowledged byte offset and line number.'''

    def __init__(self, path):
        self.path = pathlib.Path(path)
        try:
            self.data = json.loads(self.path.read_text())
        except FileNotFoundError:
            self.data = {}
        except (OSError, json.JSONDecodeError) as err:
            raise RuntimeError(f'{self.path}: unreadable ingest state ({err}); move it '
                               f'away to re-send everything (ids prevent duplicates)')

    @staticmethod
    def _identity(path):
        st = os.stat(path)
        with open(path, 'rb') as fp:
            head = hashlib.sha256(fp.read(4096)).hexdigest()[:16]

        return st, {'dev': st.st_dev, 'ino': st.st_ino, 'head': head}

    def start(self, path):
        '''(offset, line number) to resume from.'''
        st, ident = self._identity(path)
        ent = self.data.get(str(path))
        if (not ent or any(ent.get(k) != v for k, v in ident.items() if k != 'head')
                or ent.get('offset', 0) > st.st_size
                or (ent.get('offset', 0) >= 4096 and ent.get('head') != ident['head'])):
            return 0, 0

        return ent['offset'], ent['line']

    def advance(self, path, offset, line):
        _, ident = self._identity(path)
        self.data[str(path)] = dict(ident, offset=offset, line=line)

    def save(self):
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # a temporary name of this process's own: never shared with another writer
        tmp = self.path.with_name(f'.{self.path.name}.{os.getpid()}.tmp')
        tmp.write_text(json.dumps(self.data, indent=1, sort_keys=True))
        os.replace(tmp, self.path)


@contextlib.contextmanager
def _client_retries(counts):
    '''Count in ``counts.retried`` the requests the client sent again to another node (what
    elastic-transport logs as it does: "Retrying request ..."), not printed.'''
    import logging

    class Retries(logging.Handler):
        def emit(self, record):
            if record.getMessage().startswith('Retrying request'):
                counts.retried += 1

    logger, handler = logging.getLogger('elastic_transport.transport'), Retries()
    logger.addHandler(handler)
    try:
        yield
    finally:
        logger.removeHandler(handler)


def _settings_text(s):
    return ', '.join(f'{k} {v}' for k, v in sorted(s.items())) or 'none'


@contextlib.contextmanager
def _fewer_collections():
    '''Python's cycle collector less often while records are made (millions of small
    acyclic dicts and tuples, freed batch by batch): it cost 10-15% of the ingest's own
    time. Restored afterwards.'''
    import gc

    before = gc.get_threshold()
    gc.set_threshold(max(before[0], 100000), *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)


class Ingestor:
    def __init__(self, client, prefix, state_path, dead_letter_path, *, batch_size=1000,
                 retry_seconds=60.0, lock_wait=300.0, out=sys.stderr, index_settings=None):
        self.client = client
        self.prefix = prefix
        #: the monthly indices' shards and replicas (None: esclient.index_settings())
        self.index_settings = index_settings
        self.state_path = pathlib.Path(state_path)
        self.lock_wait = lock_wait
        self.state = None       # read under the lock, in run()
        self.dead_letter_path = pathlib.Path(dead_letter_path)
        self.batch_size = batch_size
        self.retry_seconds = retry_seconds
        self.out = out
        self.counts = Counts()
        self._batch = []       # (action, doc head, doc tail, record, path, lineno)
        self._marks = []       # (path, offset after line, lineno) for the lines in _batch
        self._offline = None   # why Elasticsearch stopped taking records, once it did
        self._inflight = collections.deque()   # (future, batch, marks) in sending order
        self._sender = None    # the thread that sends it, during run()

    # --- output ---------------------------------------------------------------------
    def _say(self, msg):
        print(msg, file=self.out)

    def _dead_letter(self, **entry):
        self.dead_letter_path.parent.mkdir(parents=True, exist_ok=True)
        entry['time'] = time.strftime('%Y-%m-%dT%H:%M:%S%z')
        with open(self.dead_letter_path, 'a') as fp:
            fp.write(json.dumps(entry, sort_keys=True) + '\n')

    # --- Elasticsearch --------------------------------------------------------------
    def ensure_template(self):
        '''The index template as this version makes it: an older one is replaced in place,
        what changed in its settings said; the indices it made take the new replicas
        (shards are fixed at an index's creation: the next month's takes them).'''
        from elasticsearch import NotFoundError

        wanted = self.index_settings or esclient.index_settings()
        body = template_body(self.prefix, wanted)
        try:
            found = self._call(lambda: self.client.indices.get_index_template(name=self.prefix))
            [old] = found['index_templates']
            before = old['index_template'].get('template', {}).get('settings', {})
        except NotFoundError:
            before = None
        now = {k: str(v) for k, v in wanted.items()}
        if before is not None:
            before = {k: str(v) for k, v in (before.get('index') or before).items()}
            if before != now:
                self._say(f'index template {self.prefix}: settings '
                          f'{_settings_text(before)} -> {_settings_text(now)}')
        self._call(lambda: self.client.indices.put_index_template(name=self.prefix, **body))
        replicas = ({'index.auto_expand_replicas': wanted['auto_expand_replicas']}
                    if 'auto_expand_replicas' in wanted else
                    {'index.auto_expand_replicas': False,
                     'index.number_of_replicas': wanted['number_of_replicas']})
        if before is not None and before != now:
            self._call(lambda: self.client.indices.put_settings(
                index=f'{self.prefix}-*', allow_no_indices=True, settings=replicas))
            self._say(f'indices {self.prefix}-*: ' + ', '.join(
                f'{k.split(".", 1)[1]} {str(v).lower()}' for k, v in replicas.items()))
        # indices made from an older template get the fields added since (a strict
        # mapping refuses unknown fields, and adding one is allowed)
        props = body['template']['mappings']['properties']
        self._call(lambda: self.client.indices.put_mapping(
            index=f'{self.prefix}-*', allow_no_indices=True,
            properties={k: props[k] for k in ('perf_better', 'meta_json', 'ingested_at')}))

    def _call(self, fn, unanswered=None):
        '''Call fn, retrying connection errors, 429 and 5xx with exponential backoff
        until the retry budget is spent. ``unanswered`` (a list) gets one entry per attempt
        that may have reached Elasticsearch without its answer reaching us (a timeout, a
        connection lost): such an attempt may have been carried out.'''
        from elastic_transport import TlsError
        from elasticsearch import ApiError, ConnectionError, ConnectionTimeout

        deadline = time.monotonic() + self.retry_seconds
        delay = 0.5
        while True:
            try:
                return fn()
            except TlsError as err:
                raise TlsVerificationError(
                    f'TLS with Elasticsearch failed ({err}): set MDXBENCH_ES_CA_CERTS to the '
                    f'CA that signed its certificate') from None
            except (ConnectionError, ConnectionTimeout) as err:
                reason = f'cannot reach Elasticsearch: {type(err).__name__}'
                if unanswered is not None:
                    unanswered.append(reason)
            except ApiError as err:
                if err.meta.status != 429 and err.meta.status < 500:
                    raise

                reason = f'Elasticsearch answered {err.meta.status}'

            if time.monotonic() + delay > deadline:
                raise _Unavailable(reason)

            time.sleep(delay)
            self.counts.retried += 1
            delay = min(delay * 2, 10)

    def _body(self, items):
        # The NDJSON body is made here, with orjson when installed (several times faster
        # than the standard json module); the client sends bytes as they are.
        # ingested_at: when Elasticsearch was asked to store it (by the clock of this
        # host), what readers extend their local copy by (store.history)
        now = dt.datetime.now(dt.timezone.utc).isoformat(timespec='milliseconds')
        stamp = b'"ingested_at":"' + now.encode() + b'",'
        lines = []
        for action, head, tail, *_ in items:
            lines += [action, head + stamp + tail]
        return b'\n'.join(lines) + b'\n', now

    def _send(self, payload):
        body, now = payload
        unanswered = []
        resp = self._call(lambda: self.client.bulk(operations=body), unanswered)
        results = [next(iter(it.values())) for it in resp['items']]
        if unanswered or self._several_nodes():
            self._own_conflicts(results, now)
        return results

    def _several_nodes(self):
        '''Whether the client knows several nodes: it then sends a request whose connection
        was reset to the next one, and the first may have carried it out (esclient).'''
        pool = getattr(getattr(self.client, 'transport', None), 'node_pool', None)
        return pool is not None and len(pool.all()) > 1

    def _own_conflicts(self, results, now):
        '''After an attempt whose answer was lost (a timeout on a busy Elasticsearch, a
        node lost in the middle of a request the client then sent to another), the re-sent
        request finds what the lost one stored: a 409 whose document carries this
        request's own ``ingested_at`` was created by this run, not present before, and is
        counted so (status 201).'''
        conflicts = [r for r in results if r.get('status') == 409]
        if not conflicts:
            return
        docs = [{'_index': r['_index'], '_id': r['_id']} for r in conflicts]
        found = self._call(lambda: self.client.mget(docs=docs, source_includes=['ingested_at']))
        ours = {(d['_index'], d['_id']) for d in found['docs']
                if d.get('found') and d['_source'].get('ingested_at') == now}
        for r in conflicts:
            if (r['_index'], r['_id']) in ours:
                r['status'] = 201

    def _bulk(self, items):
        return self._send(self._body(items))

    def _flush(self):
        '''Hand the batch read so far to the sender thread, then settle the request before
        it (its results counted, its lines' offsets saved) while this one is sent: the
        sender always has the next request queued, the next batch is read meanwhile, and
        the state file never passes a line Elasticsearch has not acknowledged (requests
        are settled in order).'''
        batch, marks = self._batch, self._marks
        self._batch, self._marks = [], []
        if not batch and not marks:
            return

        if batch and self._offline:
            self.counts.pending += len(batch)
            return

        fut = concurrent.futures.Future()
        if not batch:
            fut.set_result([])          # lines without records: saved in their turn
        elif self._sender is None:      # no thread: send now
            self.counts.sent += len(batch)
            try:
                fut.set_result(self._send(self._body(batch)))
            except Exception as err:
                fut.set_exception(err)
        else:
            self.counts.sent += len(batch)
            fut = self._sender.submit(self._send, self._body(batch))
        self._inflight.append((fut, batch, marks))
        while len(self._inflight) > 1:
            self._settle()

    def _advance(self, marks):
        '''Save the offsets after the lines of ``marks`` (in file order): the last line of
        each file is where the next run starts.'''
        if not marks:
            return
        last = {}
        for path, offset, lineno in marks:
            last[path] = (offset, lineno)
        for path, (offset, lineno) in last.items():
            self.state.advance(path, offset, lineno)
        self.state.save()

    def _settle(self):
        '''Wait for the oldest request in flight and account for it.'''
        fut, batch, marks = self._inflight.popleft()
        try:
            results = fut.result()
        except _Unavailable as err:
            # Nothing of this batch was acknowledged: it stays pending, the state file
            # still points before it, and the rest of the perflogs is only counted.
            self._offline = self._offline or str(err)
            self.counts.pending += len(batch)
            return

        retry = []
        for item, res in zip(batch, results):
            status = res.get('status', 0)
            if status in (200, 201):
                self.counts.created += 1
            elif status == 409:
                self.counts.present += 1
            else:
                retry.append((item, res))

        if self._offline:
            # a request before this one failed: what this one stored stays stored, but
            # the offsets stay before the failed lines (the next run finds these present)
            self.counts.pending += len(retry)
            return

        # Retry the refused items alone, with backoff for 429/5xx
        for n, (item, res) in enumerate(retry):
            try:
                self._retry_alone(item, res)
            except _Unavailable as err:
                self._offline = str(err)
                self.counts.pending += len(retry) - n
                # the lines of this batch are not all acknowledged: keep the old offsets
                return

        self._advance(marks)

    def _retry_alone(self, item, first):
        deadline = time.monotonic() + self.retry_seconds
        delay = 0.5
        res = first
        while True:
            status = res.get('status', 0)
            transient = status == 429 or status >= 500
            if not transient and res is not first:
                break

            if transient and time.monotonic() + delay > deadline:
                raise _Unavailable(f'Elasticsearch kept answering {status} for a record')

            if transient:
                time.sleep(delay)
                delay = min(delay * 2, 10)

            res = self._bulk([item])[0]
            if res.get('status') in (200, 201):
                self.counts.created += 1
                return

            if res.get('status') == 409:
                self.counts.present += 1
                return

        *_, rec, path, lineno = item
        doc = to_document(rec, path, lineno)
        reason = json.dumps(res.get('error', {'status': res.get('status')}))
        self.counts.rejected += 1
        self._say(f'{path}:{lineno}: rejected by Elasticsearch: {reason}')
        self._dead_letter(kind='rejected', file=str(path), line=lineno, reason=reason, doc=doc)

    # --- perflogs -------------------------------------------------------------------
    def _read_file(self, path):
        offset, lineno = self.state.start(path)
        with open(path, 'rb') as fp:
            fp.seek(offset)
            for raw in fp:
                if not raw.endswith(b'\n'):
                    # ReFrame is still writing this line: not malformed, not an error
                    self.counts.unfinished += 1
                    self._say(f'{path}:{lineno + 1}: last line not finished (no newline '
                              f'yet): left for the next run')
                    return

                lineno += 1
                offset += len(raw)
                text = raw.decode('utf-8', errors='replace')
                if perflog.is_header(text):
                    self._marks.append((path, offset, lineno))
                    continue

                try:
                    records = perflog.parse_line(text)
                except perflog.DryRunLine:
                    self.counts.dry_run += 1
                    self._marks.append((path, offset, lineno))
                    continue
                except perflog.PerflogError as err:
                    self.counts.malformed += 1
                    self._say(f'{path}:{lineno}: {err}')
                    self._dead_letter(kind='malformed', file=str(path), line=lineno,
                                      reason=str(err), raw=text.rstrip('\n'))
                    self._marks.append((path, offset, lineno))
                    continue

                if len(self._batch) + len(records) > self.batch_size:
                    self._flush()

                docs = line_documents(self.prefix, records, path, lineno)
                self.counts.records += len(records)
                self._batch += [(action, head, tail, rec, path, lineno)
                                for (action, head, tail), rec in zip(docs, records)]

                self._marks.append((path, offset, lineno))

    def run(self, paths):
        '''Ingest under the state file's lock (raises LockBusy past ``lock_wait``).'''
        files = perflog_files(paths)
        with state_lock(self.state_path, self.lock_wait, self.out), _fewer_collections(), \
                _client_retries(self.counts):
            self.state = StateFile(self.state_path)
            return self._run(files)

    def _run(self, files):
        try:
            self.ensure_template()
        except _Unavailable as err:
            self._offline = str(err)

        with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix='bulk') as sender:
            self._sender = sender
            try:
                for f in files:
                    self._read_file(f)

                self._flush()
                while self._inflight:
                    self._settle()
            finally:
                self._sender = None

        if not self._offline:
            try:
                self._call(lambda: self.client.indices.refresh(
                    index=f'{self.prefix}-*', allow_no_indices=True))
            except _Unavailable as err:
                self._offline = str(err)

        if self.counts.pending:
            self._say(f'mdxbench ingest: {self._offline}; {self.counts.pending} record(s) '
                      f'pending, kept in the perflogs: run ingest again to send them')

        return self.counts


def count_documents(client, prefix):
    resp = client.count(index=f'{prefix}-*', allow_no_indices=True)
    return resp['count']
