#!/usr/bin/env bash
# The Jupyter kernel (issue 17) driven by jupyter_client from PyPI, a
# test-only peer installed into a venv under /tmp (never a gpy dependency):
# jupyter_kernel.py checks every reply against what the protocol requires.
# Without jupyter_client the test FAILS (CI runs with GPY_TEST_STRICT=1).
set -u
JUPYTER_CLIENT_VERSION=8.6.3
venv=${GPY_JUPYTER_VENV:-/tmp/gpy_jupyter_venv}
if ! "$venv/bin/python" -c 'import jupyter_client' 2>/dev/null; then
  python3 -m venv "$venv" >/dev/null 2>&1 &&
    "$venv/bin/pip" install -q "jupyter_client==$JUPYTER_CLIENT_VERSION" >/dev/null 2>&1 ||
    { echo "FAIL cannot install jupyter_client==$JUPYTER_CLIENT_VERSION into $venv (needed to test the kernel)"; exit 1; }
fi
exec "$venv/bin/python" "$(dirname "$0")/jupyter_kernel.py" "${GPY:-gpy}"
