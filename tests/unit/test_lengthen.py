'''Issue 44, item 2: a check says how a longer run of it is made (``lengthen``, a knob of
its own), and ``-S Check.length_factor=F`` makes it so -- what ``mdxbench accept`` asks of
a suspect's check whose noise is too large to decide within the budget.'''
import os
import pathlib
import subprocess
import sys

import pytest

from dry_runs import slurm_client_path
from mdxbench import catalog
from mdxbench.base import lengthened

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.mark.parametrize('value, factor, power, expect', [
    (2, 4, 1, 8), (30, 1, 1, 30), (2000, 8, 1 / 3, 4000), (2000, 2, 1 / 3, 2520),
    (10, 1.5, 1, 15), (2.5, 2, 1, 5.0)])
def test_a_knob_scales_by_the_factor_to_its_power(value, factor, power, expect):
    got = lengthened(value, factor, power)
    assert got == expect and type(got) is type(value)


def test_a_factor_that_is_no_length_is_refused():
    with pytest.raises(ValueError, match='length_factor 0'):
        lengthened(30, 0, 1)


def test_the_acceptance_checks_with_a_noisy_figure_declare_a_knob_of_their_own():
    classes = catalog.check_classes()
    declared = {name: cls.lengthen for name, cls in classes.items() if cls.lengthen}
    assert {'FioTarget', 'HpccHpl', 'NetperfToPeer', 'BabelStreamOmp', 'StreamOmp'} <= \
        set(declared)
    for name, knobs in declared.items():
        for var, power in knobs.items():
            # a ReFrame variable of the check, numeric, with a value to scale
            value = getattr(classes[name], var).default_value
            assert isinstance(value, (int, float)) and value > 0, (name, var, value)
            assert 0 < power <= 1, (name, var, power)


def _dry_run(tmp_path, checks, *options):
    '''The job script of ReFrame's dry run of ``checks`` on `local` with ``options`` (no
    benchmark runs: the binary is pointed at `env`).'''
    env = dict(os.environ, RFM_CONFIG_FILES=str(ROOT / 'site-configs' / 'settings.py'),
               MDXBENCH_STATE_DIR=str(tmp_path / 'state'),
               PATH=slurm_client_path(tmp_path / 'bin'))
    (tmp_path / 'state').mkdir()
    res = subprocess.run(
        [str(pathlib.Path(sys.executable).parent / 'reframe'), '-c', checks, '--dry-run',
         '--system', 'local', '-S', 'bench_binary=env', '--nocolor', *options],
        capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    [script] = (tmp_path / 'state').rglob('rfm_job.sh')
    return script.read_text()


def test_a_longer_run_is_in_the_job_script(tmp_path):
    '''ReFrame's dry run of FioTarget on `local` with the fleet's short runtime and a
    factor of 4: fio runs 8 s.'''
    text = _dry_run(tmp_path, 'checks/storage/fio.py', '-n',
                    'FioTarget%target=scratch%workload=seqwrite', '-S', 'FioTarget.runtime=2',
                    '-S', 'FioTarget.length_factor=4')
    assert '--runtime=8 ' in text + ' ', text


def test_stream_made_longer_runs_its_binary_again(tmp_path):
    '''STREAM's iterations are compiled in (the paper's 10): ReFrame's dry run of StreamOmp
    on `local` with a factor of 3 runs the binary three times in the job (the parser takes
    each kernel's best over them: tests/unit/test_stream.py).'''
    text = _dry_run(tmp_path, 'checks/memory/stream.py', '-n', 'StreamOmp%threads=one-thread',
                    '-S', 'StreamOmp.length_factor=3')
    assert "sh -c 'for i in $(seq 3); do " in text and "/env; done'" in text, text
