'''Regression tracking across system updates.

For each (system, partition, check with its parameters, perf variable), the latest runs
are compared with a baseline: the runs before a cut (a date, or a system event recorded
with ``mdxbench event add``), at most ``baseline_runs`` of them. The rule is noise-aware:
the change of the median must be at least ``min_effect`` (relative) *and* at least
``z`` robust standard deviations of the baseline (1.4826 x its MAD); which direction is
worse is what the check declared for the perf variable (``better``, carried by every
record); a series without a declared direction is reported as ``no-direction``.
'''
import polars as pl

from mdxbench.post.store.records import worse_sign
from mdxbench.post.analysis.stats import SIGMA_PER_MAD, median_mad

KEYS = ['system', 'partition', 'check', 'perf_var', 'unit', 'better']


def latest_runs(paths, cut=None, baseline_runs=10, latest_runs=3):
    '''Of each series in the Parquet files ``paths`` the runs :func:`compare` reads (its
    latest runs and its baseline's; ``cut`` as there), read a row group at a time
    (:mod:`mdxbench.post.store.rowgroups`): a records table of a few runs per series.'''
    from mdxbench.post.store import rowgroups

    valued = pl.col('value').is_not_null()
    if cut is None:
        return rowgroups.latest(paths, KEYS, baseline_runs + latest_runs, valued)
    if isinstance(cut, dict):
        at = pl.col('system').replace_strict(
            {s: t for s, t in cut.items()}, default=None, return_dtype=pl.Datetime('us', 'UTC'))
    else:
        at = pl.lit(cut).cast(pl.Datetime('us', 'UTC'))
    after, before = valued & (pl.col('time') >= at), valued & (pl.col('time') < at)
    return pl.concat([rowgroups.latest(paths, KEYS, latest_runs, after),
                      rowgroups.latest(paths, KEYS, baseline_runs, before)],
                     how='vertical_relaxed')


def compare(df, cut=None, baseline_runs=10, latest_runs=3, min_effect=0.05, z=3.0,
            min_baseline=3):
    '''A table with one row per series: baseline and latest medians, MAD, effect, robust z,
    verdict (regression, improvement, unchanged, no-baseline, no-latest).

    ``cut``: a timezone-aware datetime, or a dict {system: datetime} (events); None: the
    latest ``latest_runs`` runs of each series against the ``baseline_runs`` before them.
    '''
    lf = df.lazy().filter(pl.col('value').is_not_null()).select(KEYS + ['time', 'value']).sort('time')
    if cut is None:
        lf = lf.with_columns(
            pl.col('time').rank('ordinal', descending=True).over(KEYS).alias('_rev'))
        latest = lf.filter(pl.col('_rev') <= latest_runs)
        base = lf.filter(pl.col('_rev') > latest_runs)
    else:
        if isinstance(cut, dict):
            cuts = pl.LazyFrame({'system': list(cut), '_cut': list(cut.values())},
                                schema={'system': pl.Utf8, '_cut': pl.Datetime('us', 'UTC')})
            lf = lf.join(cuts, on='system', how='left')
        else:
            lf = lf.with_columns(pl.lit(cut).cast(pl.Datetime('us', 'UTC')).alias('_cut'))

        lf = lf.filter(pl.col('_cut').is_not_null())
        base = lf.filter(pl.col('time') < pl.col('_cut'))
        latest = lf.filter(pl.col('time') >= pl.col('_cut'))
        latest = latest.with_columns(
            pl.col('time').rank('ordinal', descending=True).over(KEYS).alias('_rev')) \
            .filter(pl.col('_rev') <= latest_runs)

    base = base.with_columns(
        pl.col('time').rank('ordinal', descending=True).over(KEYS).alias('_brev')) \
        .filter(pl.col('_brev') <= baseline_runs)
    b = base.group_by(KEYS).agg(*median_mad('value', 'base_'), pl.len().alias('base_n'))
    n = latest.group_by(KEYS).agg(pl.col('value').median().alias('latest_median'),
                                  pl.len().alias('latest_n'),
                                  pl.col('time').max().alias('latest_time'))
    out = b.join(n, on=KEYS, how='full', coalesce=True)
    sigma = SIGMA_PER_MAD * pl.col('base_mad')
    delta = pl.col('latest_median') - pl.col('base_median')
    out = out.with_columns(
        (delta / pl.col('base_median').abs()).alias('effect'),
        pl.when(sigma > 0).then(delta / sigma)
          .otherwise(pl.when(delta == 0).then(0.0).otherwise(float('inf') * delta.sign()))
          .alias('z'),
        worse_sign().alias('_sign'))
    worse = pl.col('_sign') * pl.col('effect')
    worse_z = pl.col('_sign') * pl.col('z')
    out = out.with_columns(
        pl.when(pl.col('_sign').is_null()).then(pl.lit('no-direction'))
          .when(pl.col('base_n').is_null() | (pl.col('base_n') < min_baseline)).then(pl.lit('no-baseline'))
          .when(pl.col('latest_n').is_null()).then(pl.lit('no-latest'))
          .when((worse >= min_effect) & (worse_z >= z)).then(pl.lit('regression'))
          .when((worse <= -min_effect) & (worse_z <= -z)).then(pl.lit('improvement'))
          .otherwise(pl.lit('unchanged')).alias('verdict'))
    return out.drop('_sign').sort(KEYS, nulls_last=True).collect()


VERDICTS = ('regression', 'improvement', 'unchanged', 'no-baseline', 'no-latest')


def counts(table):
    '''{verdict: number of series} of a :func:`compare` table, every verdict listed.'''
    return {v: table.filter(pl.col('verdict') == v).height for v in VERDICTS}
