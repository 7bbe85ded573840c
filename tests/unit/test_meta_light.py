'''A cycle loads the provenance (``meta``, about 1 KB a record) only for the checks whose
figures read it (``report.META_CHECKS``): the copy's table carries it on those records
alone, and the report's figures drawn from that table are the figures drawn from the whole
one (real perflogs of two main jobs).'''
import pathlib

import polars as pl

from mdxbench.post.site import report
from mdxbench.post.store import history, records

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / 'fixtures' / 'perflogs'


def _records():
    errors = []
    df = records.from_perflogs([FIXTURES / 'main-job-1', FIXTURES / 'main-job-2'], errors)
    assert errors == [] and df.height > 100
    return df


def test_the_copy_reads_meta_only_for_the_checks_that_draw_from_it(tmp_path):
    df = _records()
    copy = history.Copy(tmp_path, 'http://127.0.0.1:9', 'p')
    # as the copy of Elasticsearch holds them (esread.to_table): with when each was stored
    copy._write_part('p-local-2026.11', df.with_columns(
        pl.col('time').alias('ingested_at'), pl.format('r{}', pl.int_range(pl.len()))
        .alias('record_id')))
    light = copy.load(meta_for=report.META_CHECKS)
    assert light.columns == copy.load().columns and light.height == df.height
    cls = pl.col('check').str.split(' ').list.first()
    drawn = light.filter(cls.is_in(report.META_CHECKS))
    others = light.filter(~cls.is_in(report.META_CHECKS))
    assert drawn.height and others.height
    assert drawn['meta'].null_count() == 0 and others['meta'].null_count() == others.height
    # the same rows, in the same order, as the whole table
    whole = copy.load()
    assert light.drop('meta').equals(whole.drop('meta'))
    assert light.filter(cls.is_in(report.META_CHECKS))['meta'].to_list() == \
        whole.filter(cls.is_in(report.META_CHECKS))['meta'].to_list()


def test_the_figures_from_the_light_table_are_the_figures_of_the_whole(tmp_path):
    df = _records()
    cls = pl.col('check').str.split(' ').list.first()
    light = df.with_columns(pl.when(cls.is_in(report.META_CHECKS)).then(pl.col('meta'))
                            .otherwise(None).alias('meta'))
    (tmp_path / 'whole').mkdir()
    (tmp_path / 'light').mkdir()
    made = report.figures(df, tmp_path / 'whole')
    assert [n for n, _ in report.figures(light, tmp_path / 'light')] == [n for n, _ in made]
    assert {'iperf3-streams.png', 'osu-latency.png'} <= {n for n, _ in made}
    for name, _ in made:
        assert (tmp_path / 'light' / name).read_bytes() == \
            (tmp_path / 'whole' / name).read_bytes(), name
