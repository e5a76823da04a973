"""Round-trip latency of a trivial execute_request (`1`), gpy's Jupyter
kernel beside ipykernel, both started by jupyter_client from the same venv.
Run with the venv's python (tests/cli/jupyter_kernel.sh makes one; add
ipykernel): /tmp/gpy_jupyter_venv/bin/python bench/repl/jupyter_run.py build/gpy
Prints the median and the start-to-kernel_info time of each kernel."""
import json, os, statistics, subprocess, sys, tempfile, time
from jupyter_client import KernelManager

gpy = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else 'gpy'
N = int(os.environ.get('N', '200'))
prefix = tempfile.mkdtemp()
subprocess.run([gpy, '--install-kernel', '--prefix', prefix], check=True, stdout=subprocess.DEVNULL)
os.environ['JUPYTER_PATH'] = os.path.join(prefix, 'share/jupyter')

def measure(name):
    km = KernelManager(kernel_name=name)
    t0 = time.perf_counter()
    km.start_kernel()
    kc = km.client()
    kc.start_channels()
    kc.wait_for_ready(timeout=60)
    ready = time.perf_counter() - t0
    times = []
    for i in range(N + 10):
        t = time.perf_counter()
        kc.execute_interactive('1', timeout=30, output_hook=lambda m: None)
        if i >= 10:
            times.append(time.perf_counter() - t)
    kc.stop_channels()
    km.shutdown_kernel(now=True)
    return ready, statistics.median(times)

for name in ('gpy', 'python3'):
    ready, med = measure(name)
    print(f'{name:8s} start→ready {ready * 1000:7.1f} ms   execute round trip median {med * 1e6:8.0f} µs (N={N})')
