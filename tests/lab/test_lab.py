#!/usr/bin/env python3
# test_lab.py - `wsr lab --quick` on 2 workloads x 2 policies x P = 1, 2:
# every figure of lab.json and lab.md against the database it links to,
# recomputed from the raw events (or, for the latency percentiles, from the
# sched_latency view by the nearest-rank query of docs/schema.md), not from
# the meta rows and the formulas lab.c uses; the policy recorded in each
# database; the HTML page self-contained; and bad input (unknown workload or
# policy, a DIR that is not empty or cannot be created) exits non-zero
# without touching an existing DIR; and a trace of an older runtime (the
# corpus's fib-p1) gets no policy. TAP.
#
#   test_lab.py WSR CORPUS_TRACES_TAR_XZ
#
# Invariants: every file lives under one TemporaryDirectory; no assertion
#   compares a figure with wall-clock time.
import hashlib
import json
import os
import re
import sqlite3
import sys
import tarfile
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'lib'))
from tap import done, note, ok, run  # noqa: E402

PREC = {'throughput': 2, 'speedup': 2, 'steals': 0, 'gs_per_steal': 2,
        'attempts_per_steal': 2, 'spin_cpu_pct': 2, 'latency_p50_us': 1,
        'latency_p99_us': 1, 'locality_pct': 1}
ORDER = list(PREC)  # lab.md's column order
ARGS = ['--quick', '--workloads', 'fib,skewed', '--policies', 'go,deque', '--procs', '1,2']


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


def raw_figures(db):
    """The figures from the raw tables, each computed its own way."""
    ts0, ts1 = db.execute('SELECT min(ts), max(ts) FROM events').fetchone()
    dur = ts1 - ts0
    f = {'duration_ns': dur, 'throughput': 1e9 / dur if dur > 0 else None}
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


def check_results(wsr, out):
    with open(os.path.join(out, 'lab.json')) as fh:
        cells = json.load(fh)['cells']
    ok(len(cells) == 8, 'lab.json has 2 x 2 x 2 cells', len(cells))
    raw = {}
    for c in cells:
        name = '%s/%s/P=%d' % (c['workload'], c['policy'], c['procs'])
        path = os.path.join(out, c['db'])
        db = sqlite3.connect('file:%s?mode=ro' % path, uri=True)
        meta = dict(db.execute('SELECT key, value FROM meta'))
        ok(meta.get('policy') == c['policy'] and meta.get('gomaxprocs') == c['procs'],
           name + ': the database records the policy and P it ran with',
           (meta.get('policy'), meta.get('gomaxprocs')))
        ok(db.execute("SELECT policy FROM ev_init").fetchone()[0] == c['policy'],
           name + ': init.policy in the events')
        f = raw_figures(db)
        db.close()
        rt = run([wsr, 'report', path])
        rj = run([wsr, 'report', '--format', 'json', path])
        ok(rt.returncode == 0 and ('\n  policy: %s\n' % c['policy']) in rt.stdout and
           rj.returncode == 0 and json.loads(rj.stdout).get('policy') == c['policy'],
           name + ': wsr report names the policy (text and JSON)', rt.stdout[:400])
        raw[(c['workload'], c['policy'], c['procs'])] = f
        bad = [(k, c[k], f[k]) for k in PREC if k != 'speedup' and not close(c[k], f[k])]
        ok(c['duration_ns'] == f['duration_ns'] and not bad,
           name + ': every figure of lab.json equals the raw tables\'', bad)
    for c in cells:
        base = raw[(c['workload'], c['policy'], 1)]['duration_ns']
        sp = base / raw[(c['workload'], c['policy'], c['procs'])]['duration_ns']
        ok(close(c['speedup'], sp), '%s/%s/P=%d: speed-up against P = 1' %
           (c['workload'], c['policy'], c['procs']), (c['speedup'], sp))
    # lab.md: one row per cell, each value the raw figure at its precision,
    # each cell linking to that cell's database
    with open(os.path.join(out, 'lab.md')) as fh:
        rows = [line for line in fh if line.startswith('| ') and not line.startswith('| workload')]
    ok(len(rows) == 8, 'lab.md has 8 rows', len(rows))
    for line in rows:
        parts = [s.strip() for s in line.strip().strip('|').split('|')]
        w, pol, procs = parts[0], parts[1], int(parts[2])
        f = dict(raw[(w, pol, procs)])
        f['speedup'] = raw[(w, pol, 1)]['duration_ns'] / f['duration_ns']
        want_link = '%s/%s/p%d/trace.db' % (w, pol, procs)
        got = [re.fullmatch(r'\[(.*)\]\((.*)\)', s) for s in parts[3:]]
        errs = []
        for key, m in zip(ORDER, got):
            if m is None or m.group(2) != want_link or m.group(1) != fmt(f[key], key):
                errs.append((key, m.group(0) if m else None, fmt(f[key], key)))
        ok(len(got) == len(ORDER) and not errs and os.path.exists(os.path.join(out, want_link)),
           '%s/%s/P=%d: lab.md values and links' % (w, pol, procs), errs)
    with open(os.path.join(out, 'lab.html')) as fh:
        html = fh.read()
    ext = re.findall(r'(?i)(https?://|<script[^>]*\bsrc=|<link\b|<img\b|@import|url\()', html)
    ok('<svg' in html and not ext, 'lab.html is self-contained (inline SVG, nothing fetched)',
       ext)
    ok(all(('href="%s"' % c['db']) in html for c in cells), 'lab.html links every cell')


def check_bad_input(wsr, out, tmp):
    before = tree_hash(out)
    cases = [
        ('an unknown workload', ['--workloads', 'fib,nosuch', '--out', out]),
        ('an unknown policy', ['--policies', 'go,nosuch', '--out', out]),
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


def check_old_trace(wsr, tarball, tmp):
    """A trace of a runtime before init.policy: no meta policy, no report line."""
    with tarfile.open(tarball) as t:
        t.extractall(tmp, members=[m for m in t.getmembers()
                                   if os.path.normpath(m.name).split('/')[0] == 'fib-p1'])
    db = os.path.join(tmp, 'fib-p1.db')
    r = run([wsr, 'ingest', os.path.join(tmp, 'fib-p1'), '-o', db])
    if not ok(r.returncode == 0, 'an old trace (corpus fib-p1) ingests', r.stderr):
        return
    con = sqlite3.connect(db)
    pol = con.execute("SELECT value FROM meta WHERE key = 'policy'").fetchall()
    con.close()
    rt = run([wsr, 'report', db])
    rj = run([wsr, 'report', '--format', 'json', db])
    ok(pol == [] and 'policy' not in rt.stdout and 'policy' not in json.loads(rj.stdout),
       'an old trace: no meta policy, no policy in the report', (pol, rt.stdout[:300]))


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
    return done()


if __name__ == '__main__':
    sys.exit(main())
