#!/usr/bin/env python3
# test_crash.py - a process that dies while one of its threads is writing an event keeps
# every event it wrote (runtime/tpfreeze.c; the program: crash-midwrite.c).
#
# Usage: test_crash.py WSR CRASH_MIDWRITE MODE   (MODE: abort segv term exit fatal kill)
# Records `crash-midwrite MODE` with `wsr run --lossless --no-ingest`, then checks that
#   - the run ends as MODE says (the signal, or the exit status), and `wsr run` flushed
#     the trace (wsr-run.json "flushed": true);
#   - babeltrace2 reads the marker event the stalled thread was writing when the crash
#     came, and every g_create of the burst before it (exactly BURST + 1: the main G);
#   - `wsr ingest` reads the trace.
# MODE kill (SIGKILL, which no process can wait out) loses the event and wedges the
# session daemon's consumer: then `wsr run` must say the end of the trace may miss events
# ("flushed": false, and its warning), the trace must still ingest, and once this test,
# the daemon's last user (it runs alone), lets go, no session daemon or consumer daemon
# it started may be left running.
# Exit: 0 pass, 1 fail, 77 skip (no userfaultfd on this kernel: the program says so).
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, '..', 'lib'))
import check_trace  # noqa: E402
import lttngd  # noqa: E402
import lttngns  # noqa: E402

BURST = 200       # crash-midwrite.c
MARKER = 4242     # crash-midwrite.c: the stalled event's idleprocs
STATUS = {'abort': 128 + 6, 'segv': 128 + 11, 'term': 128 + 15, 'exit': 3, 'fatal': 2,
          'kill': 128 + 9}


def expect(cond, msg):
    print(('ok: ' if cond else 'FAIL: ') + msg)
    return bool(cond)


def main(argv):
    if len(argv) != 4 or argv[3] not in STATUS:
        print('usage: test_crash.py WSR CRASH_MIDWRITE abort|segv|term|exit|fatal|kill')
        return 2
    wsr, prog, mode = argv[1:]
    tmp = tempfile.mkdtemp(prefix='wsr-test-crash-%s-' % mode)
    before = daemons()
    try:
        with lttngd.SharedDaemon():
            rc = run(wsr, prog, mode, tmp)
        if mode == 'kill':
            left = daemons() - before
            ok = expect(not left, 'no session or consumer daemon started for this test is left '
                        'running: %s' % sorted(left))
            rc = rc if ok else 1
        return rc
    finally:
        if os.environ.get('WSR_KEEP_TRACES'):
            print('traces kept in ' + tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)


def daemons():
    """The pids of the running LTTng session and consumer daemons that this test can
    reach: those of its mount namespace (tests/lib/lttngns.py gives it one of its own,
    beside other tests' daemons)."""
    r = subprocess.run(['pgrep', '-x', 'lttng-sessiond|lttng-consumerd'],
                       stdout=subprocess.PIPE, text=True)
    ns = lttngns.mnt_ns('self')
    return {int(p) for p in r.stdout.split() if lttngns.mnt_ns(p) == ns}


def run(wsr, prog, mode, tmp):
    out = os.path.join(tmp, 't')
    env = dict(os.environ)
    for san in ('ASAN_OPTIONS', 'TSAN_OPTIONS'):
        if san in env:
            env[san] += ' handle_segv=0 handle_abort=0'
    t0 = time.monotonic()
    p = subprocess.run([wsr, 'run', '--lossless', '--no-ingest', '--out', out, '--', prog, mode],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    took = time.monotonic() - t0
    print(p.stderr.strip()[-3000:])
    if p.returncode == 77 and 'userfaultfd is not available' in p.stderr:
        print('SKIP: this kernel has no userfaultfd for the stalled write')
        return 77
    ok = expect(p.returncode == STATUS[mode], 'the program ends with status %d (got %d)'
                % (STATUS[mode], p.returncode))
    info = json.load(open(os.path.join(out, 'wsr-run.json')))
    if mode == 'kill':
        ok &= expect(info.get('flushed') is False and 'may miss events' in p.stderr,
                     'wsr run says the end of the trace may miss events ("flushed": %s; took '
                     '%.1f s)' % (info.get('flushed'), took))
        r = subprocess.run([wsr, 'ingest', out, '-o', os.path.join(tmp, 't.db'), '--quiet'],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        ok &= expect(r.returncode == 0 or 'holds no events' in r.stderr,
                     'wsr ingest reads what is left, or says there is nothing: ' +
                     r.stderr.strip()[-500:])
        return 0 if ok else 1
    ok &= expect(info.get('flushed') is True and 'still had data' not in p.stderr,
                 'wsr run flushed the trace (no sub-buffer left uncommitted; took %.1f s)'
                 % took)
    counts = {}
    marker = 0
    for name, fields in check_trace.read_trace(out):
        counts[name] = counts.get(name, 0) + 1
        if name == 'schedtrace' and fields.get('idleprocs') == MARKER:
            marker += 1
    ok &= expect(marker == 1, 'the event being written at the crash is in the trace '
                 '(%d marker events)' % marker)
    ok &= expect(counts.get('g_create') == BURST + 1,
                 'every g_create before the crash is in the trace (%s of %d)'
                 % (counts.get('g_create'), BURST + 1))
    r = subprocess.run([wsr, 'ingest', out, '-o', os.path.join(tmp, 't.db'), '--quiet'],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    ok &= expect(r.returncode == 0, 'wsr ingest reads the trace: ' + r.stderr.strip()[-500:])
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main(sys.argv))
