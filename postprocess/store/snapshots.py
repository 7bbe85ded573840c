'''The store's backup: Elasticsearch snapshots of the monthly indices (``<prefix>-*``) in a
snapshot repository the site names, and their restore into a cluster that lacks them.

* A snapshot is ``<prefix>-<yyyy.mm.dd-hhmmss>`` (UTC), of the indices only
  (``include_global_state: false``): the index template and the cluster's settings are the
  site's, and the next ingest puts the template back where it is missing. Snapshots are
  incremental in Elasticsearch (a segment stored once is not copied again), so a nightly
  one costs what changed since the last.
* ``keep``: after a snapshot, the repository's older snapshots of this prefix beyond the
  newest ``keep`` are deleted (Elasticsearch frees the files no kept snapshot uses).
* A restore never overwrites: an index of the snapshot that the cluster already holds is
  an error naming it (delete it first). It waits until every restored primary shard has
  started, so the cycle after it reads the whole history.

Core APIs only (``_snapshot``); a repository of type ``fs`` lies under every node's
``path.repo`` -- on a cluster a directory all nodes mount (NFS).
'''
import dataclasses
import datetime as dt

#: the repository's name when the site names none (``MDXBENCH_ES_SNAPSHOT_REPOSITORY``)
DEFAULT_REPOSITORY = 'mdxbench'


class SnapshotError(Exception):
    '''A snapshot or restore that did not happen, and why.'''


@dataclasses.dataclass
class Taken:
    name: str
    indices: int
    shards: int
    failed: int
    seconds: float
    deleted: list       # older snapshots removed by ``keep``


def repository_name(env=None):
    from mdxbench import settings

    return settings.get('MDXBENCH_ES_SNAPSHOT_REPOSITORY', env) or DEFAULT_REPOSITORY


def register(client, repository, location):
    '''Register (or update) the filesystem repository ``repository`` at ``location``;
    Elasticsearch checks that every node can write there.'''
    from elasticsearch import ApiError

    try:
        client.snapshot.create_repository(
            name=repository, repository={'type': 'fs', 'settings': {'location': location}})
    except ApiError as err:
        raise SnapshotError(f'repository {repository} at {location}: {_reason(err)} (a '
                            'filesystem repository must lie under every node\'s path.repo, '
                            'on a cluster a directory they all mount)') from None


def ours(client, repository, prefix):
    '''The repository's snapshots of this prefix, oldest first (``_snapshot`` entries).'''
    from elasticsearch import ApiError, NotFoundError

    try:
        snaps = client.snapshot.get(repository=repository, snapshot='_all')['snapshots']
    except NotFoundError:
        raise SnapshotError(f'no snapshot repository {repository}: register it once with '
                            '--location DIR (a directory under path.repo)') from None
    except ApiError as err:
        raise SnapshotError(f'repository {repository}: {_reason(err)}') from None
    mine = [s for s in snaps if s['snapshot'].startswith(f'{prefix}-')]
    return sorted(mine, key=lambda s: (s.get('start_time_in_millis', 0), s['snapshot']))


def take(client, repository, prefix, keep=None, now=None):
    '''A snapshot of ``<prefix>-*`` in ``repository``, waited for; :class:`Taken`. A
    snapshot that is not ``SUCCESS`` (a shard not copied) is an error, and then nothing
    older is deleted.'''
    from elasticsearch import ApiError

    now = now or dt.datetime.now(dt.timezone.utc)
    name = f'{prefix}-{now:%Y.%m.%d-%H%M%S}'
    ours(client, repository, prefix)        # the repository is there: a clear error if not
    try:
        resp = client.snapshot.create(
            repository=repository, snapshot=name, wait_for_completion=True,
            indices=f'{prefix}-*', include_global_state=False, ignore_unavailable=True,
            partial=False)
    except ApiError as err:
        raise SnapshotError(f'snapshot {name} in {repository}: {_reason(err)}') from None
    snap = resp['snapshot']
    shards = snap.get('shards', {})
    if snap.get('state') != 'SUCCESS' or shards.get('failed', 0):
        raise SnapshotError(f'snapshot {name} in {repository}: {snap.get("state")}, '
                            f'{shards.get("failed", 0)} of {shards.get("total", 0)} shards '
                            f'failed ({snap.get("failures")}); the older snapshots are kept')
    deleted = []
    if keep:
        old = ours(client, repository, prefix)[:-keep]
        deleted = [s['snapshot'] for s in old]
        if deleted:
            client.snapshot.delete(repository=repository, snapshot=','.join(deleted))
    return Taken(name, len(snap.get('indices', [])), shards.get('total', 0),
                 shards.get('failed', 0), snap.get('duration_in_millis', 0) / 1000, deleted)


def restore(client, repository, prefix, snapshot=None, timeout='10m'):
    '''Restore the indices of ``snapshot`` (default: the newest successful one of this
    prefix) into a cluster that holds none of them; (the snapshot's name, its indices)
    once every restored primary has started.'''
    from elasticsearch import ApiError

    snaps = [s for s in ours(client, repository, prefix) if s.get('state') == 'SUCCESS']
    if snapshot is None:
        if not snaps:
            raise SnapshotError(f'repository {repository} holds no successful snapshot of '
                                f'{prefix}-*')
        snap = snaps[-1]
    else:
        snap = next((s for s in snaps if s['snapshot'] == snapshot), None)
        if snap is None:
            raise SnapshotError(f'repository {repository} holds no successful snapshot '
                                f'{snapshot} (it has: '
                                f'{", ".join(s["snapshot"] for s in snaps) or "none"})')
    indices = sorted(i for i in snap['indices'] if i.startswith(f'{prefix}-'))
    there = sorted(client.indices.get(index=f'{prefix}-*', allow_no_indices=True,
                                      expand_wildcards='all'))
    clash = sorted(set(indices) & set(there))
    if clash:
        raise SnapshotError(f'the cluster already holds {len(clash)} of snapshot '
                            f'{snap["snapshot"]}\'s indices ({", ".join(clash[:3])}'
                            f'{", ..." if len(clash) > 3 else ""}): a restore never overwrites '
                            'an index; delete them first')
    try:
        client.snapshot.restore(repository=repository, snapshot=snap['snapshot'],
                                indices=','.join(indices), include_global_state=False,
                                wait_for_completion=True)
        if indices:
            client.cluster.health(index=','.join(indices), wait_for_status='yellow',
                                  timeout=timeout)
    except ApiError as err:
        raise SnapshotError(f'restore of {snap["snapshot"]} from {repository}: '
                            f'{_reason(err)}') from None
    return snap['snapshot'], indices


def _reason(err):
    try:
        return err.body['error']['reason']
    except (TypeError, KeyError):
        return str(err)
