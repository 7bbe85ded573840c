'''A measurement in a child process of its own, so that its peak memory is its own.'''
import json
import subprocess
import sys


def run(code, what='bench child'):
    '''Run the Python ``code`` in a new interpreter; the JSON object its last line of
    standard output prints. A failing child raises with its standard error.'''
    res = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True)
    if res.returncode:
        raise RuntimeError(f'{what} failed: {res.stderr[-2000:]}')
    return json.loads(res.stdout.strip().splitlines()[-1])
