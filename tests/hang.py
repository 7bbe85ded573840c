'''The time after which a test's subprocess is taken for hung.

It is a guard against a hang, not a time limit on the work: in CI the sessions beside the
quiet one run at nice 19 (ci/test.sh), and while the quiet session measures on both cores
a nice-19 process gets about 1.5% of a core. A pytest that takes 6 s alone took over 120 s
there (CI of stop 67). Tests whose figures are times measure them themselves.'''

#: seconds
HANG_S = 900
