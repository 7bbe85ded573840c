'''The robust statistics regression tracking and acceptance share: the median and the
median absolute deviation (MAD) of a column, as Polars aggregations, and the factor that
makes a MAD a standard deviation for normally distributed noise.'''
import polars as pl

#: sigma = SIGMA_PER_MAD x MAD for normal noise
SIGMA_PER_MAD = 1.4826


def median_mad(col='value', prefix=''):
    '''Aggregations ``<prefix>median`` and ``<prefix>mad`` of column ``col``.'''
    med = pl.col(col).median()
    return [med.alias(f'{prefix}median'), (pl.col(col) - med).abs().median().alias(f'{prefix}mad')]
