#!/usr/bin/env python3
"""The interactive prompt on a pseudo-terminal (issue 17), driven by
repl_prompt.sh: gpy runs on a pty, the test types keystrokes (escape
sequences for arrows, Tab, Ctrl-C, Ctrl-R, bracketed paste) and checks what
appears. Expected values are hand-checked Python results (CPython prints the
same for the same expressions). Each wait has a deadline: a prompt that
never comes back fails the test instead of hanging it.

usage: repl_pty.py GPY
"""
import os
import pty
import select
import sys
import tempfile
import termios
import time

GPY = sys.argv[1] if "/" not in sys.argv[1] else os.path.abspath(sys.argv[1])
if "/" not in GPY:
    import shutil
    GPY = shutil.which(GPY) or GPY
UP, TAB, CTRL_C, CTRL_R, CTRL_D = "\x1b[A", "\t", "\x03", "\x12", "\x04"
PASTE_START, PASTE_END = "\x1b[200~", "\x1b[201~"
# a fresh prompt (not the redraw of one while editing) starts by turning
# bracketed paste on
PROMPT = "\x1b[?2004h>>> "
DEADLINE = float(os.environ.get("REPL_PTY_DEADLINE", "30"))
failures = []


class Session:
    """One gpy on a pty; everything it printed since start is in self.out."""

    def __init__(self, env=None, cwd=None):
        e = dict(os.environ, TERM="xterm", NO_COLOR="1", GPY_DEVICE="cpu")
        e.pop("GPY_HISTORY", None)
        e.update(env or {})
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            if cwd:
                os.chdir(cwd)
            try:
                os.execve(GPY, [GPY], e)
            finally:
                os._exit(127)
        self.out = ""
        self.mark = 0
        self.expect("\x1b[?2004h")
        # keys typed before the prompt is drawn reach a terminal still in
        # cooked mode, which eats Ctrl-R and Ctrl-D: wait for the prompt
        self.settle()

    def settle(self):
        """Waits until the output ends in a prompt (plain or coloured)."""
        end = time.monotonic() + DEADLINE
        while not self.out.replace("\x1b[0m", "").endswith(">>> ") and time.monotonic() < end:
            self.read(0.1)
        self.wait_editing()

    def wait_editing(self):
        """libedit draws the prompt, then puts the terminal in raw mode: a
        key typed in between meets the cooked terminal (which takes Ctrl-D
        as end of file and Ctrl-R as reprint), so wait for raw mode."""
        end = time.monotonic() + DEADLINE
        while time.monotonic() < end:
            try:
                if not termios.tcgetattr(self.fd)[3] & termios.ICANON:
                    return
            except termios.error:
                return
            time.sleep(0.005)

    def read(self, timeout):
        r, _, _ = select.select([self.fd], [], [], timeout)
        if not r:
            return False
        try:
            data = os.read(self.fd, 65536)
        except OSError:
            return False
        self.out += data.decode("utf-8", "replace")
        return bool(data)

    def expect(self, text, deadline=DEADLINE):
        """Waits until text appears after the last match; returns what came before it."""
        end = time.monotonic() + deadline
        while True:
            i = self.out.find(text, self.mark)
            if i >= 0:
                seen = self.out[self.mark:i]
                self.mark = i + len(text)
                if text.endswith((">>> ", "... ", "\x1b[0m ")):
                    self.wait_editing()
                return seen
            if time.monotonic() > end or (not self.read(0.2) and self.dead()):
                raise AssertionError("waited for %r; the terminal shows %r" % (text, self.out[self.mark:][-600:]))

    def dead(self):
        pid, _ = os.waitpid(self.pid, os.WNOHANG)
        return pid != 0

    def type(self, keys):
        os.write(self.fd, keys.encode())

    def run(self, keys):
        """Types keys and returns the output up to the next '>>> ' prompt."""
        self.type(keys)
        return self.expect(PROMPT)

    def close(self):
        # Ctrl-D at a prompt, as a user presses it
        self.settle()
        self.type(CTRL_D)
        end = time.monotonic() + DEADLINE
        while time.monotonic() < end:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                return os.waitstatus_to_exitcode(status)
            self.read(0.1)
        os.kill(self.pid, 9)
        os.waitpid(self.pid, 0)
        raise AssertionError("gpy did not exit on Ctrl-D; the terminal shows %r" % self.out[-300:])


def check(name, cond, detail=""):
    if not cond:
        failures.append("%s: %s" % (name, detail))


# REPL_PTY_TESTS=a,b runs only those scenarios, REPL_PTY_SKIP=a,b all but
# those (the cli scripts split the slow ones off, each within a test's time)
ONLY = [t for t in os.environ.get("REPL_PTY_TESTS", "").split(",") if t]
SKIP = [t for t in os.environ.get("REPL_PTY_SKIP", "").split(",") if t]


def test(fn):
    if (ONLY and fn.__name__ not in ONLY) or fn.__name__ in SKIP:
        return fn
    try:
        fn()
    except AssertionError as e:
        failures.append("%s: %s" % (fn.__name__, e))
    return fn


tmp = tempfile.mkdtemp()
HIST = os.path.join(tmp, "history")


@test
def results_and_underscore():
    s = Session({"GPY_HISTORY": HIST})
    out = s.run("1+2\r")
    check("1+2", "3" in out, repr(out))
    out = s.run("_*2\r")
    check("_ is the last result", "6" in out, repr(out))
    out = s.run("1/0\r")
    check("traceback", "Traceback (most recent call last)" in out and "ZeroDivisionError: division by zero" in out,
          repr(out))
    check("exit status", s.close() == 0)


@test
def blocks_auto_indent_and_history():
    s = Session({"GPY_HISTORY": HIST})
    s.type("def f(x):\r")
    s.expect("...     ")  # auto-indent after ':'
    s.type("return x+1\r")
    s.expect("... ")  # dedent after return
    out = s.run("\r")  # a blank line ends the block
    out = s.run("f(1)\r")
    check("block ran", "2" in out, repr(out))
    # Up twice recalls the whole def as one entry; Enter runs it as a unit
    out = s.run("def f(x):\r" + "return x*10\r" + "\r")
    out = s.run(UP + UP + UP + "\r")  # the x*10 block, f(1), the x+1 block
    check("block recalled as a unit", "return x+1" in out, repr(out))
    out = s.run("f(1)\r")
    check("recalled block re-ran", "2" in out, repr(out))
    s.close()
    # the history file keeps the block for the next session
    with open(HIST, encoding="utf-8", errors="replace") as f:
        text = f.read()
    check("history file", "def" in text and "f(1)" in text, repr(text))
    s = Session({"GPY_HISTORY": HIST})
    out = s.run(CTRL_R + "x+1" + "\r")
    out = s.run("f(4)\r")
    check("history across sessions (Ctrl-R)", "5" in out, repr(out))
    s.close()


@test
def unwritable_history_is_silent():
    s = Session({"GPY_HISTORY": os.path.join(tmp, "no", "such", "dir", "h")})
    out = s.run("40+2\r")
    check("unwritable history", "42" in out and "rror" not in out, repr(out))
    s.close()


@test
def ctrl_c():
    s = Session({"GPY_HISTORY": ""})
    s.run("x = 5\r")
    s.type("abc" + CTRL_C)
    out = s.expect(PROMPT)
    check("Ctrl-C at the prompt", "KeyboardInterrupt" in out, repr(out))
    s.type("def g():\r")
    s.expect("... ")
    out = s.run(CTRL_C)
    check("Ctrl-C drops a block", "KeyboardInterrupt" in out, repr(out))
    # a host loop: KeyboardInterrupt with a traceback, state intact
    s.run("i = 0\r")
    s.type("while True: i += 1\r\r")
    time.sleep(0.3)
    s.type(CTRL_C)
    out = s.expect(PROMPT)
    check("Ctrl-C in a host loop", "Traceback" in out and "KeyboardInterrupt" in out, repr(out))
    out = s.run("x, i > 0\r")
    check("state after interrupt", "(5, True)" in out, repr(out))
    check("exit status", s.close() == 0)


@test
def sigint_at_prompt():
    # a SIGINT while the prompt waits for a key (kill -INT, or a Ctrl-C
    # typed while the terminal was still cooked) drops the entry like the
    # Ctrl-C key and leaves nothing pending for the next entry
    s = Session({"GPY_HISTORY": ""})
    s.type("1 +")
    s.expect("1 +")
    os.kill(s.pid, 2)
    out = s.expect(PROMPT)
    check("SIGINT at the prompt", "KeyboardInterrupt" in out, repr(out))
    out = s.run("2 + 3\r")
    check("next entry runs", "5" in out and "Interrupt" not in out, repr(out))
    check("exit status", s.close() == 0)


@test
def ctrl_c_in_cpu_kernel():
    s = Session({"GPY_HISTORY": ""})
    s.type(PASTE_START + "\n".join([
        "from numba import cuda",
        "import numpy as np",
        "",
        "@cuda.jit",
        "def spin(out, n):",
        "    i = cuda.grid(1)",
        "    s = 1",
        "    for k in range(n):",
        "        s += k % 7",
        "    out[i] = s",
        "",
        "out = cuda.to_device(np.zeros(64 * 2000, dtype=np.int64))",
        "small = cuda.to_device(np.zeros(64, dtype=np.int64))",
        "spin[1, 64](small, 10)",
    ]) + PASTE_END + "\r")
    s.expect(PROMPT)
    s.type("spin[2000, 64](out, 10**7)\r")
    time.sleep(0.5)
    s.type(CTRL_C)
    out = s.expect(PROMPT)
    check("Ctrl-C in a kernel", "KeyboardInterrupt" in out, repr(out))
    # 1 + sum(k % 7 for k in range(10)) = 25 in every element
    out = s.run("spin[1, 64](small, 10); set(small.copy_to_host().tolist())\r")
    check("launch after interrupt", "{25}" in out, repr(out))
    s.close()


@test
def completion():
    with open(os.path.join(tmp, "hello_data.txt"), "w") as f:
        f.write("hi there")
    s = Session({"GPY_HISTORY": ""}, cwd=tmp)
    out = s.run("import nump" + TAB + "\r")
    out = s.run("numpy.__name__\r")
    check("module name after import", "'numpy'" in out, repr(out))
    out = s.run("numpy.aran" + TAB + "(3)\r")
    check("attribute of a live object", "array([0, 1, 2])" in out, repr(out))
    out = s.run("pri" + TAB + "('ok')\r")
    check("builtin name", "ok" in out, repr(out))
    out = s.run("my_variable = 7\r")
    out = s.run("my_var" + TAB + " * 6\r")
    check("name in scope", "42" in out, repr(out))
    out = s.run("from numpy import ones_l" + TAB + "\r")
    out = s.run("ones_like.__name__\r")
    check("name after from-import", "'ones_like'" in out, repr(out))
    out = s.run("open('hello_d" + TAB + "').read()\r")
    check("file name in a string", "'hi there'" in out, repr(out))
    out = s.run("import cuda\r")
    out = s.run("cuda.synchron" + TAB + ".__name__\r")
    check("cuda. attribute", "'synchronize'" in out, repr(out))
    s.type("numpy.ar" + TAB + TAB)
    out = s.expect("argmax")
    s.run(CTRL_C)
    s.close()


@test
def bracketed_paste():
    s = Session({"GPY_HISTORY": ""})
    prog = "def g():\r    a = 1\r\r    return a + 1\r\rprint(g() * 3)"
    s.type(PASTE_START + prog + PASTE_END)
    s.expect("print(g() * 3)")
    out = s.run("\r")
    check("paste runs as written", "6" in out and "Error" not in out, repr(out))
    s.close()


@test
def magics():
    prog = os.path.join(tmp, "prog.gpy")
    with open(prog, "w") as f:
        f.write("ran_value = 6 * 7\nprint('ran', ran_value)\n")
    s = Session({"GPY_HISTORY": ""})
    out = s.run("%time sum(range(10))\r")
    check("%time", "45" in out and "Wall time:" in out, repr(out))
    out = s.run("%timeit 1 + 1\r")
    check("%timeit", "per loop (mean \u00b1 std. dev. of 7 runs," in out and "loops each)" in out, repr(out))
    out = s.run("%run " + prog + "\r")
    check("%run", "ran 42" in out, repr(out))
    out = s.run("%who\r")
    check("%who", "ran_value" in out, repr(out))
    out = s.run("%history\r")
    check("%history", "%time sum(range(10))" in out, repr(out))
    s.type("%load " + prog + "\r")
    s.expect("print('ran', ran_value)")
    out = s.run("\r")
    check("%load", "ran 42" in out, repr(out))
    s.type(PASTE_START + "\n".join([
        "from numba import cuda",
        "import numpy as np",
        "@cuda.jit",
        "def add1(a):",
        "    i = cuda.grid(1)",
        "    if i < a.size:",
        "        a[i] += 1",
        "",
        "a = np.zeros(4)",
        "add1[1, 4](a)",
    ]) + PASTE_END + "\r")
    s.expect(PROMPT)
    out = s.run("%ptx add1\r")
    check("%ptx", ".entry" in out and "add1(array(float64, 1d, C))" in out, repr(out[:300]))
    out = s.run("%llvm add1\r")
    check("%llvm", "define" in out, repr(out[:300]))
    out = s.run("%types add1\r")
    check("%types", "i: int64" in out, repr(out))
    out = s.run("%device\r")
    check("%device", "CUDA device" in out, repr(out))
    out = s.run("%nosuchmagic\r")
    check("unknown magic", "UsageError: Line magic function `%nosuchmagic` not found." in out, repr(out))
    out = s.run("%reset -f\r")
    out = s.run("ran_value\r")
    check("%reset", "NameError: name 'ran_value' is not defined" in out, repr(out))
    s.close()


@test
def traceback_lines():
    # tracebacks at the prompt show the lines typed, each entry's own (as
    # CPython 3.13's REPL does; the expected lines are the input)
    s = Session({"GPY_HISTORY": ""})
    s.type("def f(x):\r")
    s.expect("... ")
    s.type("return x / 0\r")
    s.expect("... ")
    s.run("\r")
    out = s.run("y = 1\r")
    out = s.run("f(y)\r")
    want = ('  File "<stdin>", line 1, in <module>\r\n    f(y)\r\n'
            '  File "<stdin>", line 2, in f\r\n    return x / 0\r\n'
            'ZeroDivisionError: division by zero')
    check("traceback with the entries' lines", want in out, repr(out))
    s.close()


@test
def colour():
    # wait for the prompt itself before looking at it (it follows the
    # bracketed-paste switch that Session waits for)
    s = Session({"GPY_HISTORY": "", "NO_COLOR": ""})
    s.expect(">>>\x1b[0m ")
    check("colour prompt on a terminal", "\x1b[1;32m" in s.out, repr(s.out))
    s.type("1/0\r")
    out = s.expect(">>>\x1b[0m ")
    check("colour traceback", "\x1b[1;35mZeroDivisionError\x1b[0m: \x1b[35mdivision by zero\x1b[0m" in out, repr(out))
    s.close()
    s = Session({"GPY_HISTORY": "", "NO_COLOR": "1"})
    s.expect(">>> ")
    out = s.run("1/0\r")
    check("NO_COLOR", "\x1b[1;32m" not in s.out and "\x1b[35m" not in out, repr(s.out))
    s.close()


for f in failures:
    print("FAIL " + f)
sys.exit(1 if failures else 0)
