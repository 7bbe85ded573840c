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


#: Python for a child's code: ``peak_mib()``, this process's peak resident memory since it
#: began (Linux's VmHWM, reset by exec; ``ru_maxrss`` keeps the high mark of the process
#: that forked it, so a child of a large parent reported the parent's peak)
PEAK = '''
def peak_mib():
    for line in open('/proc/self/status'):
        if line.startswith('VmHWM:'):
            return int(line.split()[1]) / 1024
'''
