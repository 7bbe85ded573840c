'''The substitution parameters of TPC-H Q1-Q7 that the libraries' implementations use:
the specification's validation values, the same as in tpch-sql/q*.sql (the reference).
Dates bound a half-open range [date, end) where the SQL adds an interval.'''
import datetime as dt


class P:
    q1_date = dt.date(1998, 9, 2)            # date '1998-12-01' - interval '90' day
    q2_size, q2_type, q2_region = 15, 'BRASS', 'EUROPE'
    q3_segment, q3_date = 'BUILDING', dt.date(1995, 3, 15)
    q4_date, q4_end = dt.date(1993, 7, 1), dt.date(1993, 10, 1)       # + 3 months
    q5_region = 'ASIA'
    q5_date, q5_end = dt.date(1994, 1, 1), dt.date(1995, 1, 1)        # + 1 year
    q6_date, q6_end = dt.date(1994, 1, 1), dt.date(1995, 1, 1)        # + 1 year
    # between .06 - 0.01 and .06 + 0.01, written as the decimals it means: in float64,
    # 0.06 + 0.01 is 0.06999999999999999 and would leave out discounts of 0.07
    q6_discount_lo, q6_discount_hi, q6_quantity = 0.05, 0.07, 24
    q7_nations = ('FRANCE', 'GERMANY')
    q7_first, q7_last = dt.date(1995, 1, 1), dt.date(1996, 12, 31)   # between: inclusive
