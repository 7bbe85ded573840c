'''ci/lib.sh: a shell where another checkout's ci/activate.sh was sourced must not make
this checkout's scripts use the other's state directory and venv (its services).'''
import pathlib
import subprocess

ROOT = pathlib.Path(__file__).resolve().parents[2]


def lib_env(**env):
    res = subprocess.run(['bash', '-c', 'source ci/lib.sh; echo "$MDXBENCH_STATE_DIR|$MDXBENCH_VENV"'],
                         cwd=ROOT, capture_output=True, text=True,
                         env={'PATH': '/usr/bin:/bin', **env})
    assert res.returncode == 0, res.stderr
    return res.stdout.strip().split('|'), res.stderr


def test_another_checkouts_state_is_not_inherited():
    (state, venv), err = lib_env(MDXBENCH_ROOT='/elsewhere/mdxbench',
                                 MDXBENCH_STATE_DIR='/elsewhere/mdxbench/.mdxbench',
                                 MDXBENCH_VENV='/elsewhere/mdxbench/.mdxbench/venv')
    assert (state, venv) == (f'{ROOT}/.mdxbench', f'{ROOT}/.mdxbench/venv')
    assert 'MDXBENCH_STATE_DIR=/elsewhere/mdxbench/.mdxbench belongs to the checkout ' \
           '/elsewhere/mdxbench' in err


def test_a_state_directory_set_on_purpose_is_kept():
    (state, venv), err = lib_env(MDXBENCH_ROOT='/elsewhere/mdxbench', MDXBENCH_STATE_DIR='/srv/mdx')
    assert (state, venv) == ('/srv/mdx', '/srv/mdx/venv') and err == ''
    (state, _), _ = lib_env(MDXBENCH_ROOT=str(ROOT), MDXBENCH_STATE_DIR=f'{ROOT}/other-state')
    assert state == f'{ROOT}/other-state'
