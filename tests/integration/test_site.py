'''The "On a site" path of the README, as an operator would take it: an unprivileged user,
a fresh clone, `ci/site-install.sh` (no root, no apt, no Elasticsearch), then the daily
commands: dry-run every real system (local, mdx2, laurel, aws-pcluster: what it selects and
each case's job script), a real run on `local` through the Slurm of
this machine, and `mdxbench ingest` into the Elasticsearch of ci/.'''
import os
import pathlib
import pwd
import re
import shutil
import subprocess

import pytest

from conftest import ROOT, count

USER = 'mdxbench-op'
# the real systems (nscluster is ci/cluster.sh's test cluster, not a site's)
SYSTEMS = ('local', 'mdx2', 'laurel', 'aws-pcluster')


@pytest.fixture(scope='module')
def operator():
    if subprocess.run(['id', '-u', USER], capture_output=True).returncode != 0:
        subprocess.run(['useradd', '--system', '--no-create-home', '--shell', '/bin/bash', USER],
                       check=True)
    return pwd.getpwnam(USER)


def test_site_install_and_daily_commands_as_an_unprivileged_user(operator, es, tmp_path_factory):
    base = pathlib.Path(tmp_path_factory.mktemp('site'))
    for d in [base] + list(base.parents):      # the operator must reach its own directory
        if d == pathlib.Path('/'):
            break
        d.chmod(d.stat().st_mode | 0o711)
    clone = base / 'mdxbench'
    subprocess.run(['git', 'clone', '-q', str(ROOT), str(clone)], check=True)
    home = base / 'home'
    home.mkdir()
    # this machine's Slurm, as a site's own slurm.conf would be readable by its users
    conf = base / 'slurm.conf'
    shutil.copy(os.environ['SLURM_CONF'], conf)
    subprocess.run(['chown', '-R', f'{operator.pw_uid}:{operator.pw_gid}', str(base)], check=True)
    script = f'''set -e
cd {clone}
bash ci/site-install.sh
source ci/activate.sh
# two dry runs at a time (one core each; xargs exits non-zero if any fails)
printf '%s\n' {' '.join(SYSTEMS)} | \
    xargs -P 2 -I SYS sh -c 'reframe -c checks/ --dry-run --system SYS --nocolor > dry-SYS.txt'
reframe -c checks/ -r --system local --nocolor -n 'SockperfPingPong%placement=loopback' -S duration=2
mdxbench ingest
'''
    env = {'PATH': '/usr/local/bin:/usr/bin:/bin', 'HOME': str(home), 'LANG': 'C.UTF-8',
           'SLURM_CONF': str(conf), 'MDXBENCH_LAUREL_ACCOUNT': 'acct',
           'MDXBENCH_LAUREL_MODULES_SYSTEM': 'nomod',
           # no S3 target in these commands: MinIO and warp are not built (5 of this test's
           # 7 minutes); CI has no route to Spack's repositories: no fetch is tried (the
           # fetch path is tested against file:// remotes in test_spack.py)
           'MDXBENCH_GO_TOOLS': '0', 'MDXBENCH_SPACK_FETCH': '0', **es['env']}
    res = subprocess.run(['runuser', '-u', USER, '--', 'env', '-i',
                          *[f'{k}={v}' for k, v in env.items()], 'bash', '-c', script],
                         capture_output=True, text=True, timeout=1800)
    out = res.stdout + res.stderr
    assert res.returncode == 0, out[-6000:]
    assert not (clone / '.mdxbench' / 'slurm').exists()          # nothing of ci/'s services
    assert 'records 3, sent 3, created 3' in res.stdout, out[-3000:]
    assert count(es) == 3
    for s in SYSTEMS:
        # what `reframe -l` would list, and each case's job script generated (a dry run
        # lists the selection too: one ReFrame start per system, not two)
        dry = (clone / f'dry-{s}.txt').read_text()
        ran = re.search(r'\[\s*PASSED\s*\] Ran (\d+)/(\d+) test case\(s\) from (\d+) check', dry)
        assert ran and int(ran.group(1)) >= 1 and int(ran.group(3)) >= 1, (s, dry[-3000:])
    # what the operator's commands made belongs to the operator
    for sub in ('venv', 'perflogs', 'ingest'):
        assert (clone / '.mdxbench' / sub).stat().st_uid == operator.pw_uid, sub
