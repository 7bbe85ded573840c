'''A record's place in the history's Parquet files as one 64-bit number (file, row group,
row), and the places read back a row group at a time.'''
import numpy as np
import polars as pl


#: a record's place in the history is one 64-bit number: its file, row group and row
FILE_BITS, GROUP_BITS, ROW_BITS = 16, 24, 24


ROW_MASK = (1 << ROW_BITS) - 1
GROUP_MASK = (1 << GROUP_BITS) - 1


def locator(fi, group):
    '''The place of each record of row group ``group`` of file ``fi`` (its row ``_at``)
    as one 64-bit number: file, row group and row in FILE_BITS, GROUP_BITS and ROW_BITS.'''
    return (pl.lit(fi, pl.UInt64) * 2 ** (GROUP_BITS + ROW_BITS)
            + pl.lit(group, pl.UInt64) * 2 ** ROW_BITS
            + pl.col('_at').cast(pl.UInt64)).alias('_loc')


def group_key(locs):
    '''The file and row group of places ``locs`` as one number (file << GROUP_BITS | group).'''
    return locs >> np.uint64(ROW_BITS)


def row_of(locs):
    return locs & np.uint64(ROW_MASK)


def file_and_group(key):
    '''(file, row group) of a :func:`group_key`.'''
    return int(key >> np.uint64(GROUP_BITS)), int(key & np.uint64(GROUP_MASK))


def by_row_group(locs):
    '''(:func:`group_key`, the rows) of the sorted places ``locs``, a row group at a time.'''
    groups = group_key(locs)
    cuts = np.flatnonzero(np.diff(groups)) + 1
    for part in np.split(locs, cuts) if len(locs) else ():
        yield group_key(part[0]), row_of(part)
