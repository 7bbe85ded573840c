'''What a ``reframe --dry-run`` on `local` in a test needs beside the checks: a Slurm client
that answers its version at once.

ReFrame's srun launcher asks ``srun --version`` when a case is set up. `local`'s
partition points SLURM_CONF into the state directory (site-configs/systems/local.yaml),
and a test's fresh state directory has no slurm.conf there: srun then looks for the
controller in DNS and gives up after a minute -- a minute per dry run, for a version a dry
run never uses. The stand-in prints what Debian 12's srun prints; nothing is launched.'''
import os


def slurm_client_path(bindir):
    '''A PATH with a stand-in ``srun`` (version only) in ``bindir`` first.'''
    os.makedirs(bindir, exist_ok=True)
    srun = os.path.join(bindir, 'srun')
    with open(srun, 'w') as fp:
        fp.write('#!/bin/sh\necho slurm 22.05.8\n')
    os.chmod(srun, 0o755)
    return f'{bindir}{os.pathsep}{os.environ["PATH"]}'
