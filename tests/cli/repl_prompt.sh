#!/usr/bin/env bash
# The interactive prompt on a pseudo-terminal (issue 17): line editing,
# history, blocks as units, completion, Ctrl-C, bracketed paste, magics and
# colour. repl_pty.py drives gpy through python's pty module
# (REPL_PTY_TESTS=a,b runs only those scenarios).
set -u
exec python3 "$(dirname "$0")/repl_pty.py" "${GPY:-gpy}"
