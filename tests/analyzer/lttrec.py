# lttrec.py - record one program with lttng for the analyzer tests.
#
# Invariants:
#   - Each recording uses its own session (unique name) and tracks only the
#     recorded process (vpid tracker), so concurrent tests on the machine's
#     one root session daemon never mix their events.
#   - The program is started paused (a shell waiting on stdin execs it), is
#     tracked by pid, and is released only after `lttng start`.
#   - Large sub-buffers (4 MiB x 8, per-UID) so the recorded runs lose no
#     events (DESIGN.md, recording notes); the caller checks the loss counts.
#   - The session daemon is shared as `wsr run` shares it (tests/lib/lttngd.py):
#     started if none answers, stopped by its last user if a user started it.
# Concurrency: one recording per call; safe to run in parallel processes.
import atexit
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'lib'))
import lttngd  # noqa: E402

_counter = [0]


def lttng(*args, check=True):
    r = subprocess.run(['lttng'] + list(args), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    if check and r.returncode != 0:
        raise RuntimeError('lttng %s failed: %s%s' % (' '.join(args), r.stdout, r.stderr))
    return r


_share = []


def ensure_sessiond():
    """Takes this process's share of the session daemon (tests/lib/lttngd.py), once;
    it is given back at exit, and the last user stops a daemon that a user started."""
    if not _share:
        d = lttngd.SharedDaemon()
        d.acquire()
        _share.append(d)
        atexit.register(d.release)


def record(out_dir, argv, env=None, events='wsr:*', subbuf='4M', nsubbuf='8', contexts=False):
    """Records argv into out_dir; returns (exit status, stdout, stderr)."""
    ensure_sessiond()
    _counter[0] += 1
    session = 'wsrana-%d-%d' % (os.getpid(), _counter[0])
    lttng('create', session, '--output=' + out_dir)
    try:
        lttng('enable-channel', '--userspace', '--session', session, '--buffers-uid',
              '--subbuf-size=' + subbuf, '--num-subbuf=' + nsubbuf, 'c0')
        lttng('enable-event', '--userspace', '--session', session, '--channel', 'c0', events)
        if contexts:
            # The ids are payload fields (tracepoints/wsr_tp.h); the same ids
            # as LTTng contexts as well, as an older recipe would add them.
            lttng('add-context', '--userspace', '--session', session, '--channel', 'c0',
                  '-t', 'vpid', '-t', 'vtid')
        full_env = dict(os.environ)
        if env:
            full_env.update(env)
        with tempfile.TemporaryFile() as so, tempfile.TemporaryFile() as se:
            p = subprocess.Popen(['sh', '-c', 'read _go; exec "$0" "$@"'] + list(argv),
                                 stdin=subprocess.PIPE, stdout=so, stderr=se, env=full_env)
            try:
                lttng('track', '--userspace', '--session', session, '--vpid=%d' % p.pid)
                lttng('start', session)
            except Exception:
                p.kill()
                p.wait()
                raise
            p.stdin.write(b'go\n')
            p.stdin.close()
            rc = p.wait()
            lttng('stop', session)
            so.seek(0)
            se.seek(0)
            return rc, so.read().decode(errors='replace'), se.read().decode(errors='replace')
    finally:
        lttng('destroy', session, check=False)


def stats_line(stderr):
    """The runtime's WSRDEBUG=stats=1 line as a dict."""
    for line in stderr.splitlines():
        if line.startswith('wsr stats:'):
            return {k: int(v) for k, v in (kv.split('=') for kv in line.split()[2:])}
    raise RuntimeError('no "wsr stats:" line in stderr:\n' + stderr[-2000:])
