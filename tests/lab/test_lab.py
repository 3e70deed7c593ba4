#!/usr/bin/env python3
# test_lab.py - `wsr lab --quick` on 2 workloads x 3 policies (go, deque, and
# trylock with knobs: victims=nearest and the lab's nodes=2) x P = 1, 2:
# every figure of lab.json and lab.md against the database it links to,
# recomputed from the raw events (or, for the latency percentiles, from the
# sched_latency view by the nearest-rank query of docs/schema.md; for the
# throughput, from the count the program printed in its log), not from the
# meta rows and the formulas lab.c uses; the policy and the knobs recorded
# in each database; the HTML page self-contained; and bad input (unknown
# workload, policy or knob, a DIR that is not empty or cannot be created)
# exits non-zero without touching an existing DIR, and a knob value the
# runtime ignores stops the lab; and a trace of an older runtime (the
# corpus's fib-p1) gets no policy and no knobs; SIGTERM to `wsr lab` mid-run
# stops its run, the program and the session. TAP.
#
#   test_lab.py WSR CORPUS_TRACES_TAR_XZ
#
# Invariants: every file lives under one TemporaryDirectory; no assertion
#   compares a figure with wall-clock time.
import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import tarfile
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'lib'))
from procs import alive, comm, descendants  # noqa: E402
from tap import done, note, ok, run  # noqa: E402
import lttngd  # noqa: E402
import wsrdb  # noqa: E402

PREC = {'throughput': 0, 'speedup': 2, 'steals': 0, 'gs_per_steal': 2,
        'attempts_per_steal': 2, 'spin_cpu_pct': 2, 'latency_p50_us': 1,
        'latency_p99_us': 1, 'locality_pct': 1, 'lock_waits': 0, 'lock_wait_ms': 3,
        'remote_steals': 0}
ORDER = list(PREC)  # lab.md's column order
KNOBBED = 'trylock+victims=nearest+nodes=2'
ARGS = ['--quick', '--workloads', 'fib,skewed', '--policies', 'go,deque,' + KNOBBED,
        '--procs', '1,2']
NCELLS = 2 * 3 * 2
# Each workload's own operation count, as its output states it.
OPS_RE = {'fib': r'^spawned = (\d+)$', 'skewed': r'^ran = (\d+)$'}
# The knobs each policy runs with at P (the runtime's defaults, debug.c).
KNOBS = {
    'go': lambda p: 'policy=go,steal=half,victims=random,spinning=half,runnext=1,'
                    'globalcheck=61,stealrounds=4',
    'deque': lambda p: 'policy=deque,steal=one,victims=random,spinning=half,runnext=1,'
                       'globalcheck=61,stealrounds=4',
    KNOBBED: lambda p: 'policy=trylock,steal=one,victims=nearest,spinning=half,runnext=1,'
                       'globalcheck=61,stealrounds=4' +
                       (',topology=2x%d' % (p // 2) if p % 2 == 0 else ''),
}


def tree_hash(d):
    h = hashlib.sha256()
    for root, dirs, files in sorted(os.walk(d)):
        dirs.sort()
        for f in sorted(files):
            p = os.path.join(root, f)
            h.update(p.encode())
            with open(p, 'rb') as fh:
                h.update(fh.read())
    return h.hexdigest()


def rank(db, pct):
    n = db.execute('SELECT count(*) FROM sched_latency').fetchone()[0]
    if n == 0:
        return None
    return db.execute('SELECT latency_ns FROM sched_latency ORDER BY latency_ns LIMIT 1 '
                      'OFFSET ?', ((n * pct + 99) // 100 - 1,)).fetchone()[0] / 1e3


def raw_figures(db, ops, policy):
    """The figures from the raw tables, each computed its own way."""
    ts0, ts1 = db.execute('SELECT min(ts), max(ts) FROM events').fetchone()
    dur = ts1 - ts0
    f = {'duration_ns': dur, 'throughput': ops * 1e9 / dur if dur > 0 else None}
    # lock waits: the locked policies' steal_lock_wait events, a2 = wait_ns
    if policy in ('locked', 'trylock'):
        nw, ns = db.execute("SELECT count(*), coalesce(sum(a2), 0) FROM events "
                            "WHERE name = 'steal_lock_wait'").fetchone()
        f['lock_waits'], f['lock_wait_ms'] = nw, ns / 1e6
    else:
        f['lock_waits'] = f['lock_wait_ms'] = None
    # remote steals: thief p and victim a1 on different nodes of the knobs' topology
    knobs = db.execute("SELECT extra FROM events WHERE name = 'knobs'").fetchone()[0]
    topo = re.search(r'(?:^|,)topology=(\d+)x(\d+)', knobs)
    f['remote_steals'] = None
    if topo:
        per = int(topo.group(2))
        f['remote_steals'] = sum(p // per != v // per for p, v in db.execute(
            "SELECT p, a1 FROM events WHERE name = 'steal'"))
    f['knobs'] = knobs
    steals, stolen = db.execute("SELECT count(*), coalesce(sum(n), 0) FROM ev_steal").fetchone()
    probed = db.execute("SELECT coalesce(sum(probed), 0) FROM ev_steal_scan").fetchone()[0]
    f['steals'] = steals
    f['gs_per_steal'] = stolen / steals if steals else None
    f['attempts_per_steal'] = probed / steals if steals else None
    # spinning: spin_start of an M until its spin_stop or its p_idle (the P
    # released), whichever comes first; open at the end: until the end
    open_, spin = {}, 0
    for name, m, ts in db.execute("SELECT name, m, ts FROM events WHERE name IN "
                                  "('spin_start', 'spin_stop', 'p_idle') ORDER BY id"):
        if name == 'spin_start':
            open_[m] = ts
        elif m in open_:
            spin += ts - open_.pop(m)
    spin += sum(ts1 - t for t in open_.values())
    f['spin_cpu_pct'] = 100.0 * spin / dur if dur > 0 else 0.0
    f['latency_p50_us'] = rank(db, 50)
    f['latency_p99_us'] = rank(db, 99)
    # locality: each g_run against the last runqput of its G, unless a
    # globrunq_put came after that (the G was made runnable with no P)
    last, n, local = {}, 0, 0
    for name, g, p in db.execute("SELECT name, g, p FROM events WHERE name IN "
                                 "('runqput', 'globrunq_put', 'g_run') ORDER BY id"):
        if name == 'runqput':
            last[g] = p
        elif name == 'globrunq_put':
            last[g] = None
        else:
            q = last.pop(g, None)
            if q is not None:
                n += 1
                local += q == p
    f['locality_pct'] = 100.0 * local / n if n else None
    return f


def close(a, b):
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


def fmt(v, key):
    return '-' if v is None else '%.*f' % (PREC[key], v)


def log_ops(out, c):
    with open(os.path.join(out, c['trace'] + '.log')) as fh:
        m = re.search(OPS_RE[c['workload']], fh.read(), re.M)
    return int(m.group(1))


def check_results(wsr, out):
    with open(os.path.join(out, 'lab.json')) as fh:
        cells = json.load(fh)['cells']
    ok(len(cells) == NCELLS, 'lab.json has 2 x 3 x 2 cells', len(cells))
    raw = {}
    for c in cells:
        name = '%s/%s/P=%d' % (c['workload'], c['label'], c['procs'])
        path = os.path.join(out, c['db'])
        db = wsrdb.connect(path, ro=True)
        meta = dict(db.execute('SELECT key, value FROM meta'))
        ok(meta.get('policy') == c['policy'] and meta.get('gomaxprocs') == c['procs'],
           name + ': the database records the policy and P it ran with',
           (meta.get('policy'), meta.get('gomaxprocs')))
        ok(db.execute("SELECT policy FROM ev_init").fetchone()[0] == c['policy'],
           name + ': init.policy in the events')
        ops = log_ops(out, c)
        f = raw_figures(db, ops, c['policy'])
        db.close()
        want = KNOBS[c['label']](c['procs'])
        ok(f['knobs'] == want and meta.get('policy_knobs') == want and c['knobs'] == want,
           name + ': the knobs event, meta policy_knobs and lab.json name the knobs in force',
           (f['knobs'], meta.get('policy_knobs'), c['knobs'], want))
        ok(c['ops'] == ops and c['trace'] == '%s/%s/p%d' % (c['workload'], c['label'],
                                                             c['procs']),
           name + ': lab.json gives the workload\'s own count and the trace', (c['ops'], ops))
        rt = run([wsr, 'report', path])
        rj = run([wsr, 'report', '--format', 'json', path])
        ok(rt.returncode == 0 and ('\n  policy: %s\n' % c['policy']) in rt.stdout and
           rj.returncode == 0 and json.loads(rj.stdout).get('policy') == c['policy'],
           name + ': wsr report names the policy (text and JSON)', rt.stdout[:400])
        ok(('\n  knobs: %s\n' % want) in rt.stdout and
           json.loads(rj.stdout).get('policy_knobs') == want,
           name + ': wsr report names the knobs (text and JSON)', rt.stdout[:400])
        raw[(c['workload'], c['label'], c['procs'])] = f
        bad = [(k, c[k], f[k]) for k in PREC if k != 'speedup' and not close(c[k], f[k])]
        ok(c['duration_ns'] == f['duration_ns'] and not bad,
           name + ': every figure of lab.json equals the raw tables\'', bad)
    for c in cells:
        base = raw[(c['workload'], c['label'], 1)]['duration_ns']
        sp = base / raw[(c['workload'], c['label'], c['procs'])]['duration_ns']
        ok(close(c['speedup'], sp), '%s/%s/P=%d: speed-up against P = 1' %
           (c['workload'], c['label'], c['procs']), (c['speedup'], sp))
    lock = [c for c in cells if c['label'] == KNOBBED]
    ok(all(c['lock_waits'] is not None for c in lock) and
       all(c['lock_waits'] is None for c in cells if c['label'] != KNOBBED),
       'lock waits: a figure under trylock only')
    ok(all((c['remote_steals'] is not None) == (c['label'] == KNOBBED and c['procs'] == 2)
           for c in cells), 'remote steals: a figure with a topology (nodes=2 at P = 2) only')
    # lab.md: one row per cell, each value the raw figure at its precision,
    # each cell linking to that cell's database
    with open(os.path.join(out, 'lab.md')) as fh:
        md = fh.read()
    rows = [line for line in md.splitlines()
            if line.startswith('| ') and not line.startswith('| workload')]
    ok(len(rows) == NCELLS, 'lab.md has a row per cell', len(rows))
    for line in rows:
        parts = [s.strip() for s in line.strip().strip('|').split('|')]
        w, pol, procs = parts[0], parts[1], int(parts[2])
        f = dict(raw[(w, pol, procs)])
        f['speedup'] = raw[(w, pol, 1)]['duration_ns'] / f['duration_ns']
        trace = '%s/%s/p%d' % (w, pol, procs)
        want_link = trace + '/trace.db'
        got = [re.fullmatch(r'\[(.*)\]\((.*)\)', s) for s in parts[3:-1]]
        errs = []
        for key, m in zip(ORDER, got):
            if m is None or m.group(2) != want_link or m.group(1) != fmt(f[key], key):
                errs.append((key, m.group(0) if m else None, fmt(f[key], key)))
        if parts[-1] != '[%s](%s)' % (trace, trace):
            errs.append(('trace', parts[-1]))
        ok(len(got) == len(ORDER) and not errs and os.path.exists(os.path.join(out, want_link)),
           '%s/%s/P=%d: lab.md values and links (each figure to its database, the last '
           'column to its trace)' % (w, pol, procs), errs)
    for fname in ('lab.md', 'lab.txt', 'lab.html'):
        with open(os.path.join(out, fname)) as fh:
            text = fh.read()
        missing = [v for c in cells for v in [c['knobs']] if v not in text]
        ok(not missing, fname + ': lists the knobs in force', missing[:2])
    with open(os.path.join(out, 'lab.html')) as fh:
        html = fh.read()
    ext = re.findall(r'(?i)(https?://|<script[^>]*\bsrc=|<link\b|<img\b|@import|url\()', html)
    ok('<svg' in html and not ext, 'lab.html is self-contained (inline SVG, nothing fetched)',
       ext)
    ok(all(('href="%s"' % c['db']) in html and ('href="%s"' % c['trace']) in html
           for c in cells), 'lab.html links every cell to its database and its trace')


def check_bad_input(wsr, out, tmp):
    before = tree_hash(out)
    cases = [
        ('an unknown workload', ['--workloads', 'fib,nosuch', '--out', out]),
        ('an unknown policy', ['--policies', 'go,nosuch', '--out', out]),
        ('an unknown knob', ['--policies', 'go+nosuch=1', '--out', out]),
        ('a label that is not a directory name', ['--policies', 'go+steal=one/..',
                                                   '--out', out]),
        ('a bad P', ['--procs', '1,0', '--out', out]),
        ('an existing, non-empty DIR', ['--quick', '--workloads', 'fib', '--policies', 'go',
                                        '--procs', '1', '--out', out]),
        ('a DIR that cannot be created', ['--quick', '--workloads', 'fib', '--procs', '1',
                                          '--out', os.path.join(out, 'lab.md', 'x')]),
    ]
    for what, args in cases:
        r = run([wsr, 'lab'] + args)
        ok(r.returncode != 0 and 'wsr lab: error:' in r.stderr and tree_hash(out) == before,
           'bad input (%s): an error, a non-zero exit, DIR unchanged' % what,
           'exit %d\n%s' % (r.returncode, r.stderr))
    r = run([wsr, 'lab', '--quick', '--workloads', 'fib', '--policies', 'go+steal=some',
             '--procs', '1', '--out', os.path.join(tmp, 'badknob')])
    ok(r.returncode == 1 and 'ignoring bad value steal=some' in r.stderr and
       not os.path.exists(os.path.join(tmp, 'badknob', 'lab.json')),
       'a knob value the runtime ignores stops the lab (exit 1, the runtime\'s message)',
       'exit %d\n%s' % (r.returncode, r.stderr))


def check_old_trace(wsr, tarball, tmp):
    """A trace of a runtime before init.policy: no meta policy, no report line."""
    with tarfile.open(tarball) as t:
        t.extractall(tmp, members=[m for m in t.getmembers()
                                   if os.path.normpath(m.name).split('/')[0] == 'fib-p1'])
    db = os.path.join(tmp, 'fib-p1.db')
    r = run([wsr, 'ingest', os.path.join(tmp, 'fib-p1'), '-o', db])
    if not ok(r.returncode == 0, 'an old trace (corpus fib-p1) ingests', r.stderr):
        return
    con = wsrdb.connect(db)
    pol = con.execute("SELECT value FROM meta WHERE key IN ('policy', 'policy_knobs')").fetchall()
    con.close()
    rt = run([wsr, 'report', db])
    rj = run([wsr, 'report', '--format', 'json', db])
    ok(pol == [] and 'policy' not in rt.stdout and 'knobs' not in rt.stdout and
       not {'policy', 'policy_knobs'} & set(json.loads(rj.stdout)),
       'an old trace: no meta policy or policy_knobs, no policy in the report',
       (pol, rt.stdout[:300]))


def stopped_run(wsr, out):
    """Starts `wsr lab` on one cell and SIGSTOPs its program as soon as it
    exists; returns (lab Popen, [wsr run pid, program pid]) or (None, why)."""
    p = subprocess.Popen([wsr, 'lab', '--workloads', 'skewed', '--policies', 'go',
                          '--procs', '1', '--out', out],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    end = time.monotonic() + 60
    while time.monotonic() < end and p.poll() is None:
        kids = descendants(p.pid)
        progs = [k for k in kids if comm(k) == 'skewed']
        if progs:
            try:
                os.kill(progs[0], signal.SIGSTOP)
                return p, [kids[0], progs[0]]
            except OSError:
                break  # it ended before it could be stopped: try again
        time.sleep(0.002)
    p.kill()
    p.wait()
    return None, 'no program seen running'


def check_sigterm(wsr, tmp):
    """SIGTERM to `wsr lab` mid-run stops its `wsr run` child, and with it the
    program and the session: the run dies with its parent. The program is held
    stopped meanwhile, so it cannot end on its own first."""
    for attempt in range(3):
        p, kids = stopped_run(wsr, os.path.join(tmp, 'killed%d' % attempt))
        if p is not None:
            break
    if not ok(p is not None, 'wsr lab started a run and its program', kids):
        return
    wsrrun, prog = kids[0], kids[-1]
    p.terminate()
    p.wait()
    time.sleep(0.5)  # the child's SIGTERM (if any) is forwarded meanwhile
    try:
        os.kill(prog, signal.SIGCONT)
    except ProcessLookupError:
        pass  # already gone: killed with its wsr run (PR_SET_PDEATHSIG)
    end = time.monotonic() + 30
    while time.monotonic() < end and (alive(wsrrun) or alive(prog)):
        time.sleep(0.05)
    ok(not alive(wsrrun) and not alive(prog), 'after SIGTERM to wsr lab its run ends',
       [k for k in (wsrrun, prog) if alive(k)])
    info = {}
    for root, _, files in os.walk(os.path.join(tmp, 'killed%d' % attempt)):
        if 'wsr-run.json' in files:
            with open(os.path.join(root, 'wsr-run.json')) as f:
                info = json.load(f)
    # wsr-run.json, when wsr run lived to write it, says a signal ended the
    # program (SIGTERM forwarded, or SIGKILL as its wsr run died).
    ok(not info or info.get('exit_signal') in (signal.SIGTERM, signal.SIGKILL),
       'the program was stopped by a signal (it did not run on to its end)', info)
    sessions = re.findall(r'<name>(wsr-%d-\d+-\d+)</name>' % wsrrun,
                          run(['lttng', '--mi', 'xml', 'list']).stdout)
    ok(not sessions, 'and no recording session of its wsr run is left', sessions)


def main():
    wsr, tarball = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory(prefix='wsr-lab-') as tmp:
        check_old_trace(wsr, tarball, tmp)
        out = os.path.join(tmp, 'lab')
        r = run([wsr, 'lab'] + ARGS + ['--out', out])
        if not ok(r.returncode == 0, 'wsr lab --quick runs', r.stderr + r.stdout):
            return done()
        note(r.stdout)
        check_results(wsr, out)
        check_bad_input(wsr, out, tmp)
        check_sigterm(wsr, tmp)
    return done()


if __name__ == '__main__':
    # One share of the session daemon for the whole test (tests/lib/lttngd.py), so that
    # its wsr runs, one after the other, do not each start and stop a daemon.
    with lttngd.SharedDaemon():
        rc = main()
    sys.exit(rc)
