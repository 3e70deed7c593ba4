#!/usr/bin/env python3
# measure.py - the cost of tracing, side by side in one run (docs/recording.md).
#
# Usage: measure.py NOTRACE_BUILD TRACE_BUILD [--reps N] [--cost-reps N] [--only fib,skewed]
#   NOTRACE_BUILD: a build dir configured with -Dtracing=disabled
#   TRACE_BUILD:   a build dir with tracing enabled (the default)
#
# For each workload, the four modes run interleaved, REPS rounds, so that
# drift in machine load hits every mode alike:
#   disabled    examples built without the provider
#   no-session  the traced build, with a session daemon but no session
#   default     under `wsr run --no-ingest` (discard mode, 4 MiB x 8)
#   lossless    under `wsr run --no-ingest --lossless`
# disabled and no-session runs are redone if an LTTng session that tracks every
# process (not a `wsr run` one, which tracks its own program) existed around them.
# Wall time is the program's own (from fork to exit; for wsr run, the
# "exited ... after" line, which excludes session set-up and read-back).
# Reports median and minimum per mode, the no-session cost against disabled
# (wall and CPU time; disabled and no-session run COST_REPS rounds, 3 x REPS by
# default, as they are cheap and the difference sought is small), events/s and
# bytes/event of the traces, and discarded events in default mode.
# It is a benchmark, not a test: it asserts nothing.
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

WORKLOADS = {'fib': ['27'], 'skewed': ['100000']}


def timed(argv, env):
    """Runs ARGV; returns (wall s, user+sys CPU s of it and its children, stderr)."""
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                         env=env)
    err = p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    t1 = time.perf_counter()
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        raise RuntimeError('%s failed (%d): %s' % (argv, p.returncode, err[-500:]))
    return t1 - t0, ru.ru_utime + ru.ru_stime, err


def sessions_exist():
    """True if a session that could trace any process exists: a user-space
    session whose vpid tracker is "all" (`wsr run` sessions track one vpid)."""
    out = subprocess.run(['lttng', 'list'], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         text=True).stdout
    for name in re.findall(r'^\s*\d+\) (\S+)', out, flags=re.M):
        detail = subprocess.run(['lttng', 'list', name], stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, text=True).stdout
        if re.search(r'Virtual process IDs:\s+all', detail):
            return True
    return False


def timed_quiet(argv, env, tries=200):
    """timed() with no LTTng session before or after; a run that may have been
    traced by someone else's session (one tracking every process) is redone."""
    for _ in range(tries):
        if sessions_exist():
            time.sleep(0.5)
            continue
        res = timed(argv, env)
        if not sessions_exist():
            return res
    raise RuntimeError('LTTng sessions kept appearing; cannot measure the no-session cost')


def main(argv):
    args = argv[1:]
    reps = 5
    cost_reps = None
    only = list(WORKLOADS)
    pos = []
    i = 0
    while i < len(args):
        if args[i] == '--reps':
            reps = int(args[i + 1])
            i += 2
        elif args[i] == '--cost-reps':
            cost_reps = int(args[i + 1])
            i += 2
        elif args[i] == '--only':
            only = args[i + 1].split(',')
            i += 2
        else:
            pos.append(args[i])
            i += 1
    if len(pos) != 2:
        print('usage: measure.py NOTRACE_BUILD TRACE_BUILD [--reps N] [--only fib,skewed]')
        return 2
    notrace, trace = pos
    if cost_reps is None:
        cost_reps = 3 * reps
    wsr = os.path.join(trace, 'analyzer', 'wsr')
    env = dict(os.environ)
    env.pop('WSRDEBUG', None)
    if subprocess.run(['lttng', 'list'], stdout=subprocess.DEVNULL,
                      stderr=subprocess.DEVNULL).returncode != 0:
        subprocess.run(['lttng-sessiond', '--daemonize'], check=True)
    tmp = tempfile.mkdtemp(prefix='wsr-measure-')
    rows = []
    try:
        for name in only:
            wargs = WORKLOADS[name]
            times = {m: [] for m in ('disabled', 'no-session', 'default', 'lossless')}
            cpu = {'disabled': [], 'no-session': []}
            traces = {'default': [], 'lossless': []}
            for r in range(max(reps, cost_reps)):
                for mode, build in (('disabled', notrace), ('no-session', trace)):
                    if r < cost_reps:
                        w, c, _ = timed_quiet([os.path.join(build, 'examples', name)] + wargs,
                                              env)
                        times[mode].append(w)
                        cpu[mode].append(c)
                if r >= reps:
                    continue
                for mode, extra in (('default', []), ('lossless', ['--lossless'])):
                    out = os.path.join(tmp, '%s-%s-%d' % (name, mode, r))
                    _, _, err = timed([wsr, 'run', '--no-ingest', '--out', out] + extra + ['--',
                                   os.path.join(trace, 'examples', name)] + wargs, env)
                    m = re.search(r'exited with status \d+ after ([\d.]+) s', err)
                    # --no-ingest says what the packet indexes hold; the events are
                    # counted once, by the ingest (meta.events, `wsr check`'s events).
                    s = re.search(r'(\d+) bytes; in the trace: (\d+) events discarded, '
                                  r'(\d+) packets lost', err)
                    subprocess.run([wsr, 'ingest', '-q', out], check=True)
                    fig = json.loads(subprocess.run(
                        [wsr, 'report', os.path.join(out, 'trace.db'), '--format', 'json'],
                        stdout=subprocess.PIPE, check=True, text=True).stdout)
                    events, span = fig['metrics']['events'], fig['duration_ns'] / 1e9
                    times[mode].append(float(m.group(1)))
                    traces[mode].append((events, span, events / span if span > 0 else 0,
                                         float(s.group(1)) / events if events else 0,
                                         float(s.group(2)), float(s.group(3))))
                    shutil.rmtree(out, ignore_errors=True)
            rows.append((name, wargs, times, cpu, traces))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    print('rounds: %d for default/lossless, %d for disabled/no-session, interleaved; wall '
          'is the program\'s own time in seconds' % (reps, cost_reps))
    print()
    print('| workload | mode | wall median | wall min | vs disabled | CPU median | CPU vs '
          'disabled | events | events/s | bytes/event | discarded per run |')
    print('|---|---|---|---|---|---|---|---|---|---|---|')
    for name, wargs, times, cpu, traces in rows:
        base = statistics.median(times['disabled'])
        cbase = statistics.median(cpu['disabled'])
        for mode in ('disabled', 'no-session', 'default', 'lossless'):
            med = statistics.median(times[mode])
            cmed = cvs = ev = eps = bpe = disc = ''
            if mode in cpu:
                cmed = '%.3f' % statistics.median(cpu[mode])
                cvs = '%+.1f%%' % ((statistics.median(cpu[mode]) / cbase - 1) * 100)
            if mode in traces:
                tr = traces[mode]
                ev = '%d' % statistics.median(t[0] for t in tr)
                eps = '%.2fM' % (statistics.median(t[2] for t in tr) / 1e6)
                bpe = '%.1f' % statistics.median(t[3] for t in tr)
                disc = '/'.join('%d' % t[4] for t in tr)
            print('| %s %s | %s | %.3f | %.3f | %+.1f%% | %s | %s | %s | %s | %s | %s |'
                  % (name, ' '.join(wargs), mode, med, min(times[mode]),
                     (med / base - 1) * 100, cmed, cvs, ev, eps, bpe, disc))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
