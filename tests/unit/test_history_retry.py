'''Which failures of Elasticsearch a read of the local copy waits out (mdxbench.post.store
.history): "not now" answers (429, 5xx: a shard copy lost under a search, no master yet)
and a lost partition read are tried again; "never" answers (4xx) are the caller's at once;
the aggregation's connection errors are the caller's at once (it decides: the copy as it
is, or exit 75), a partition read's are waited out.'''
import pytest
from elastic_transport import ApiResponseMeta, HttpHeaders, NodeConfig
from elasticsearch import ApiError, ConnectionError

from mdxbench.post.store import esread, history


def _api_error(status):
    meta = ApiResponseMeta(status=status, http_version='1.1', headers=HttpHeaders(),
                           duration=0.0, node=NodeConfig('http', '127.0.0.1', 9200))
    return ApiError('search_phase_execution_exception', meta=meta,
                    body={'error': {'type': 'search_phase_execution_exception'}})


def _connection_error():
    return ConnectionError('Connection refused')


@pytest.mark.parametrize('status,again', [(429, True), (500, True), (502, True),
                                          (503, True), (400, False), (404, False),
                                          (409, False), (499, False)])
def test_only_a_not_now_answer_is_waited_out(status, again):
    assert history._unavailable(_api_error(status)) is again


def _failing(errors, value='read'):
    '''A call that raises ``errors`` one after the other, then returns ``value``.'''
    left = list(errors)

    def call():
        if left:
            raise left.pop(0)
        return value
    return call


@pytest.fixture
def copy(tmp_path, monkeypatch):
    monkeypatch.setattr(history.time, 'sleep', lambda s: None)
    return history.Copy(tmp_path, 'http://127.0.0.1:9200', 'mdxbench-perf')


def test_a_lost_partition_read_is_started_again_and_said(copy, capsys):
    call = _failing([esread.Interrupted('lost after 1060 of 12108'), _connection_error()])
    assert copy._retrying(call, 'idx', 60, retry=lambda e: isinstance(
        e, esread.Interrupted)) == 'read'
    err = capsys.readouterr().err
    assert 'reading idx again in 1 s: Interrupted: lost after 1060 of 12108' in err
    assert 'reading idx again in 2 s: ConnectionError' in err


def test_a_never_answer_is_the_callers_at_once(copy):
    with pytest.raises(ApiError):
        copy._retrying(_failing([_api_error(400)]), 'digests', 60, retry=history._unavailable)


def test_the_aggregations_connection_error_is_the_callers_at_once(copy):
    with pytest.raises(ConnectionError):
        copy._retrying(_failing([_connection_error()]), 'digests', 60,
                       retry=history._unavailable, connection=False)
    assert copy._retrying(_failing([_api_error(503)]), 'digests', 60,
                          retry=history._unavailable, connection=False) == 'read'


def test_past_its_wait_a_read_is_unreachable_naming_what(copy):
    with pytest.raises(history.Unreachable, match='reading idx failed and did not recover '
                       'within 0 s'):
        copy._retrying(_failing([esread.Interrupted('x')]), 'idx', 0,
                       retry=lambda e: isinstance(e, esread.Interrupted))
