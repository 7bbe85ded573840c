'''Computations over the records table: robust statistics (``stats``), regressions against
a baseline (``regress``), change points over whole histories (``changes``), references
proposed from measurements (``proposals``). Functions return data and print nothing;
imports ``store`` only (never ``site``).'''
