# tests/lib/tap.py - the TAP output the python tests share: ok() per check,
# skip() for a check this build cannot run, note() for comments, done() for
# the plan line and the exit status, run() for a command's output.
#
# Invariants: checks are numbered from 1 in the order they run; done() is
#   called once, last, and returns 1 if any check failed.
# Concurrency: one thread (each test script is its own process).
import subprocess
import sys

_n = 0
_failed = 0


def ok(cond, name, diag=''):
    """One check: 'ok N - name', or 'not ok N - name' and up to 40 lines of diag."""
    global _n, _failed
    _n += 1
    print('%s %d - %s' % ('ok' if cond else 'not ok', _n, name))
    if not cond:
        _failed += 1
        lines = ['#   ' + line for line in str(diag).splitlines()[:40]]
        for line in lines:
            print(line)
        # meson's --print-errorlogs shows a TAP test's stderr, not its stdout:
        # the failure and its samples go there too, so a CI log has them.
        print('not ok %d - %s' % (_n, name), *lines, sep='\n', file=sys.stderr)
    sys.stdout.flush()
    return cond


def skip(name, why):
    """A check that cannot run here: 'ok N - name # SKIP why'."""
    global _n
    _n += 1
    print('ok %d - %s # SKIP %s' % (_n, name, why))
    sys.stdout.flush()


def note(msg):
    for line in str(msg).splitlines():
        print('# ' + line)
    sys.stdout.flush()


def failed():
    return _failed


def done():
    """The plan line; the exit status for sys.exit."""
    print('1..%d' % _n)
    sys.stdout.flush()
    return 1 if _failed else 0


def run(argv, **kw):
    return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)
