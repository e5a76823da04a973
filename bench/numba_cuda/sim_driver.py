"""Runs one numba-cuda test module under CPython (Numba's CUDA simulator when
NUMBA_ENABLE_CUDASIM=1) and writes the same lines as shim/ncrun_driver.gpy:
STATUS|Class.method|first line of the error.
Usage: python sim_driver.py MODNAME OUT"""
import sys
import unittest


def first_line(err):
    exc = err[1]
    msg = str(exc).split('\n')[0]
    return type(exc).__name__ + ': ' + msg


class LineResult(unittest.TestResult):
    def __init__(self, out):
        super().__init__()
        self.out = out

    def emit(self, status, test, text):
        name = '.'.join(test.id().split('.')[-2:])
        text = text.replace('\n', ' ').replace('|', '/')[:300]
        self.out.write(f"{status}|{name}|{text}\n")
        self.out.flush()

    def addSuccess(self, test):
        self.emit('pass', test, '')

    def addFailure(self, test, err):
        self.emit('fail', test, first_line(err))

    def addError(self, test, err):
        if isinstance(test, unittest.TestCase):
            self.emit('error', test, first_line(err))
        else:  # setUpClass / module fixtures
            self.out.write(f"class-error|{test.description}|{first_line(err)}\n")

    def addSkip(self, test, reason):
        self.emit('skip', test, reason)

    def addExpectedFailure(self, test, err):
        self.emit('pass', test, '')

    def addUnexpectedSuccess(self, test):
        self.emit('fail', test, 'unexpected success')

    def addSubTest(self, test, subtest, err):
        if err is not None:
            kind = 'fail' if issubclass(err[0], test.failureException) else 'error'
            self.emit(kind, test, first_line(err))


def main():
    modname, path = sys.argv[1], sys.argv[2]
    with open(path, 'a') as out:
        try:
            suite = unittest.defaultTestLoader.loadTestsFromName(modname)
        except BaseException as e:  # noqa: BLE001 - report any import failure
            out.write(f"import-error||{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}\n")
            return
        suite.run(LineResult(out))
        out.write('done||\n')


if __name__ == '__main__':
    main()
