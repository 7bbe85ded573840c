'''Fidelity of the checks: each memory and compute check of `local`, run through ReFrame
and Slurm, beside a hand-tuned direct run of the same binary (mpirun, ranks bound to cores,
no Slurm), with the same problem. Prints both figures and their ratio; the target is the
check within 5% of the direct run. Then HPL on the two BLAS libraries of `local`, side by
side: OpenBLAS (environment `native`, the machine's libblas.so.3) and Intel MKL (environment
`mkl`), both measured in this run. A benchmark script, not a test.

    mdxbench fidelity [--repeats N]
'''
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

from mdxbench import REPO_ROOT, perflog
from mdxbench.parsers import hpcc
from mdxbench.post.site import text as textable

# check -> (perf variables compared, parser of the direct run's output)
CASES = {
    'HpccStream': (('triad', 'copy', 'triad_1t'), hpcc.stream),
    'HpccHpl': (('gflops',), hpcc.hpl),
}
TARGET = 0.05


def run_checks(workdir):
    env = dict(os.environ, MDXBENCH_PERFLOG_DIR=str(workdir / 'perflogs'),
               RFM_CONFIG_FILES=str(REPO_ROOT / 'site-configs' / 'settings.py'))
    cmd = [str(pathlib.Path(sys.executable).parent / 'reframe'), '-c', str(REPO_ROOT / 'checks'),
           '-r', '--system', 'local', '--prefix', str(workdir / 'rfm'), '--nocolor']
    for name in CASES:
        cmd += ['-n', f'^{name}$']

    res = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if res.returncode != 0:
        raise SystemExit(f'mdxbench fidelity: reframe failed:\n{res.stdout[-3000:]}')

    out = {}
    for f in (workdir / 'perflogs').rglob('*.log'):
        for line in f.read_text().splitlines()[1:]:
            for r in perflog.parse_line(line):
                key = r['check'] if r['environ'] == 'native' else f"{r['check']}+{r['environ']}"
                out.setdefault(key, {'meta': r['meta']})[r['perf_var']] = r['perf_value']

    return out


def run_direct(meta, parser, workdir):
    '''The same hpcc input, started by hand: mpirun, one rank per core, bound to cores.'''
    d = pathlib.Path(tempfile.mkdtemp(dir=workdir))
    p, q = (int(x) for x in meta['grid'].split('x'))
    (d / 'hpccinf.txt').write_text(hpcc.input_file(int(meta['hpl_n']), 192, p, q))
    cmd = ['mpirun', '--bind-to', 'core', '-np', str(p * q), shutil.which('hpcc') or 'hpcc']
    env = dict(os.environ, OMP_NUM_THREADS='1', OMPI_ALLOW_RUN_AS_ROOT='1',
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM='1')
    subprocess.run(cmd, cwd=d, check=True, capture_output=True, env=env)
    return parser((d / 'hpccoutf.txt').read_text()), ' '.join(cmd)


def main(repeats=1):
    rows = []
    with tempfile.TemporaryDirectory(prefix='mdxbench-fidelity-') as tmp:
        tmp = pathlib.Path(tmp)
        checks, direct = {}, {}
        for i in range(repeats):
            for name, vals in run_checks(tmp / f'run{i}').items():
                for k, v in vals.items():
                    checks.setdefault(name, {}).setdefault(k, []).append(v)

            for name, (_, parser) in CASES.items():
                meta = checks[name]['meta'][-1]
                res, cmd = run_direct(meta, parser, tmp)
                for k, v in res.items():
                    direct.setdefault(name, {}).setdefault(k, []).append(v)

        for name, (vars_, _) in CASES.items():
            for var in vars_:
                # best of the repeats, as STREAM and HPL themselves report their best time
                c = max(checks[name][var])
                d = max(direct[name][var])
                rows.append((name, var, c, d, c / d))
                print(f'{name} {var}: check runs {checks[name][var]}, direct runs '
                      f'{direct[name][var]}', file=sys.stderr)

    ok = all(abs(1 - r) <= TARGET for *_, r in rows)
    print(textable.render(
        ('check', 'perf var', 'check (Slurm)', 'direct run', 'ratio', f'|1-ratio| <= {TARGET:.0%}'),
        [(name, var, f'{c:.2f}', f'{d:.2f}', f'{r:.3f}', 'met' if abs(1 - r) <= TARGET else 'MISSED')
         for name, var, c, d, r in rows]))

    print(f'baseline: the direct mpirun runs of the same binary and input in this run; '
          f'best of {repeats} interleaved repeat(s) each')
    print_blas(checks)
    return 0 if ok else 1


def print_blas(checks):
    '''HPL of hpcc on OpenBLAS (native) and on MKL (mkl), measured in this run.'''
    native, mkl = checks.get('HpccHpl'), checks.get('HpccHpl+mkl')
    print()
    if not native or not mkl:
        print('HPL by BLAS: no run in environment mkl (is PyPI mkl in the venv? ci/install.sh installs it)')
        return
    libs = [c['meta'][-1].get('blas', {}) for c in (native, mkl)]
    o, m = max(native['gflops']), max(mkl['gflops'])
    print(textable.render(
        (f'HPL (hpcc, N={native["meta"][-1]["hpl_n"]})', 'GFLOPS', 'BLAS'),
        [('native (OpenBLAS)', f'{o:.2f}', libs[0].get('debian_package', libs[0].get('library'))),
         ('mkl (Intel MKL)', f'{m:.2f}', libs[1].get('debian_package', libs[1].get('library')))]))
    print(f'ratio MKL / OpenBLAS: {m / o:.3f} (baseline: OpenBLAS, the same run)')
