"""The gpy Jupyter kernel through jupyter_client (see jupyter_kernel.sh)."""
import json, os, signal, sys, tempfile, time
from jupyter_client import KernelManager
from jupyter_client.session import Session

gpy = os.path.abspath(sys.argv[1]) if os.sep in sys.argv[1] else sys.argv[1]
failures = []

def check(name, ok, detail=''):
    if not ok:
        failures.append(name)
        print(f'FAIL {name} {detail}')

# the kernelspec `gpy --install-kernel --prefix P` writes is the one started
prefix = tempfile.mkdtemp()
import subprocess
subprocess.run([gpy, '--install-kernel', '--prefix', prefix], check=True, stdout=subprocess.DEVNULL)
spec = json.load(open(os.path.join(prefix, 'share/jupyter/kernels/gpy/kernel.json')))
check('kernelspec', spec['argv'][1:] == ['--jupyter-kernel', '-f', '{connection_file}']
      and spec['display_name'] == 'gpy' and spec['interrupt_mode'] == 'signal', spec)
os.environ['JUPYTER_PATH'] = os.path.join(prefix, 'share/jupyter')
os.environ['GPY_DEVICE'] = 'cpu'
km = KernelManager(kernel_name='gpy')
km.start_kernel()
kc = km.client()
kc.start_channels()
kc.wait_for_ready(timeout=30)

def run(code, timeout=30):
    """Executes code; returns (reply content, outputs as (msg_type, content))."""
    msg_id = kc.execute(code)
    outs = []
    while True:
        m = kc.get_iopub_msg(timeout=timeout)
        if m['parent_header'].get('msg_id') != msg_id:
            continue
        t = m['msg_type']
        if t == 'status' and m['content']['execution_state'] == 'idle':
            break
        if t != 'status':
            outs.append((t, m['content']))
    reply = kc.get_shell_msg(timeout=timeout)
    return reply['content'], outs

def text(outs, name='stdout'):
    return ''.join(c['text'] for t, c in outs if t == 'stream' and c['name'] == name)

# kernel_info
kc.kernel_info()
info = kc.get_shell_msg(timeout=10)['content']
check('kernel_info', info['protocol_version'] == '5.3' and info['language_info']['name'] == 'gpy', info)

# stdout stream, execution_count, execute_input
r, outs = run('print("hello", 6 * 7)')
check('stream', text(outs) == 'hello 42\n', outs)
check('execute_input', any(t == 'execute_input' and c['code'] == 'print("hello", 6 * 7)' for t, c in outs), outs)
check('status ok', r['status'] == 'ok' and r['execution_count'] == 1, r)

# state persists; the last expression's repr is the execute_result, not a stream
r, outs = run('x = [1, 2]\nx.append(3)\nx')
res = [c for t, c in outs if t == 'execute_result']
check('execute_result', len(res) == 1 and res[0]['data']['text/plain'] == '[1, 2, 3]'
      and res[0]['execution_count'] == 2, outs)
check('no stream for result', text(outs) == '', outs)
r, outs = run('def f(n):\n    return n * x[-1]\n\nprint(f(5))')
check('persist', text(outs) == '15\n', outs)

# errors: ename, evalue, traceback
r, outs = run('1 / 0')
err = [c for t, c in outs if t == 'error']
check('error reply', r['status'] == 'error' and r['ename'] == 'ZeroDivisionError'
      and r['evalue'] == 'division by zero', r)
check('error msg', len(err) == 1 and err[0]['traceback'][-1] == 'ZeroDivisionError: division by zero', err)
r, outs = run('print("before")\nundefined_name')
check('stdout before error', text(outs) == 'before\n' and r['ename'] == 'NameError'
      and r['evalue'] == "name 'undefined_name' is not defined", (r, outs))

# silent cells do not count or publish
r, outs = run('y = 1')
before = r['execution_count']
kc.execute('z = 2', silent=True)
rs = kc.get_shell_msg(timeout=10)['content']
r, outs = run('z')
check('silent', r['execution_count'] == before + 1 and
      [c['data']['text/plain'] for t, c in outs if t == 'execute_result'] == ['2'], (rs, r, outs))

# stderr
r, outs = run('import sys\nsys.stderr.write("warn\\n")\nNone')
check('stderr', text(outs, 'stderr') == 'warn\n', outs)

# completion (the prompt's completer) and is_complete
run('import math')
kc.complete('y = 2\nmath.sq', len('y = 2\nmath.sq'))
c = kc.get_shell_msg(timeout=10)['content']
check('complete', 'sqrt' in c['matches'] and c['cursor_start'] == 11 and c['cursor_end'] == 13, c)
kc.complete('pri', 3)
c = kc.get_shell_msg(timeout=10)['content']
check('complete builtin', 'print' in c['matches'] and c['cursor_start'] == 0, c)
for code, want in [('x = 1', 'complete'), ('for i in range(3):', 'incomplete'), ('f(1,', 'incomplete'),
                   ('x = )', 'invalid')]:
    kc.is_complete(code)
    c = kc.get_shell_msg(timeout=10)['content']
    check(f'is_complete {code!r}', c['status'] == want, c)

# magics
r, outs = run('%time sum(range(1000))')
check('magic', r['status'] == 'ok' and 'Wall time' in text(outs) + ''.join(
    c['data']['text/plain'] for t, c in outs if t == 'execute_result'), outs)

# interrupt a running loop: KeyboardInterrupt, state intact
kc.execute('n = 0\nwhile True:\n    n += 1\n')
time.sleep(0.5)
km.interrupt_kernel()
reply = kc.get_shell_msg(timeout=20)['content']
check('interrupt', reply['status'] == 'error' and reply['ename'] == 'KeyboardInterrupt', reply)
r, outs = run('print(n > 0, f(2))')
check('after interrupt', text(outs) == 'True 6\n', outs)

# a CPU-device kernel: its prints reach the notebook; an interrupt stops a long launch
# and the next launch runs correctly (1 + sum(k % 7 for k in range(10)) = 25, by hand)
r, outs = run('''from numba import cuda
import numpy as np
@cuda.jit
def spin(out, n):
    i = cuda.grid(1)
    s = 1
    for k in range(n):
        s += k % 7
    out[i] = s
    if i == 0:
        print("kernel says", s)
out = cuda.to_device(np.zeros(64 * 2000, dtype=np.int64))
spin[1, 64](out, 10)
cuda.synchronize()
''')
check('kernel print', text(outs) == 'kernel says 25\n', (r, outs))
kc.execute('spin[2000, 64](out, 10**7)\ncuda.synchronize()')
time.sleep(1.0)
km.interrupt_kernel()
reply = kc.get_shell_msg(timeout=30)['content']
check('interrupt kernel', reply['status'] == 'error' and reply['ename'] == 'KeyboardInterrupt', reply)
r, outs = run('spin[1, 64](out, 10)\ncuda.synchronize()\nint(out.copy_to_host()[5])')
check('launch after interrupt', [c['data']['text/plain'] for t, c in outs if t == 'execute_result'] == ['25'], (r, outs))

# a message signed with a wrong key is dropped; the kernel keeps serving
bad = Session(key=b'not-the-key')
bad.send(kc.shell_channel.socket, 'execute_request',
         {'code': 'print("forged")', 'silent': False, 'store_history': True,
          'user_expressions': {}, 'allow_stdin': False})
time.sleep(0.3)
r, outs = run('print("still here")')
check('wrong key rejected', text(outs) == 'still here\n', outs)
try:
    m = kc.get_shell_msg(timeout=0.5)
    check('no reply to forged', False, m)
except Exception:
    pass

# shutdown
kc.shutdown()
reply = kc.control_channel.get_msg(timeout=10)['content']
check('shutdown', reply['status'] == 'ok', reply)
deadline = time.time() + 10
while km.is_alive() and time.time() < deadline:
    time.sleep(0.05)
check('exited', not km.is_alive())
kc.stop_channels()
if km.is_alive():
    km.shutdown_kernel(now=True)
if failures:
    sys.exit(1)
print('ok jupyter kernel')
