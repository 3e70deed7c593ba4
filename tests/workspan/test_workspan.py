#!/usr/bin/env python3
# test_workspan.py - work, span and the greedy bounds of recorded DAGs
# against programs whose DAG is known by construction (ws-prog.c). TAP.
#
#   test_workspan.py WSR WS_PROG PROCS
#   test_workspan.py WSR WS_PROG scale     (wsr scale: the table, the plot)
#
# Each shape is recorded with `wsr run --lossless` under WSRMAXPROCS=PROCS.
# ws-prog measures its own busy loops (d >= W each, CLOCK_MONOTONIC), so the
# construction's figures come from measured durations and not from W:
#   work:  D <= work <= D + strands * STRAND_NS + R
#   span:  S_lo <= span <= S + critical strands * STRAND_NS + R
# The lower ends are exact: every loop lies inside one strand (no scheduling
# point in it), and every leaf hangs off a spawn path. The upper ends allow
# each strand STRAND_NS of runtime code outside the loops (g_run -> the G's
# function, spawn, waitgroup, exit, a new G's first stack page, an M's
# creation: 1 to 150 us measured, docs/workspan.md), and R, the time the
# program's threads waited for a CPU while runnable (run_delay of
# /proc/self/task/*/schedstat, printed by ws-prog): the trace has no kernel
# events, so a thread descheduled while it holds a G adds to that G's
# running time; R bounds what descheduling can add to any sum of strands.
# Exact checks besides: the DAG's invariants (edges go forward, strand time
# == g_state running time, the critical path's strands add up to the span),
# T_P >= max(T1/P, T_inf), the figures' definitions, spawn edges per shape,
# and the strictness verdict per shape.
# Invariants: every temporary file lives under one TemporaryDirectory; no
#   assertion compares a figure with wall-clock time other than the trace's.
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'lib'))
from tap import done, ok, run  # noqa: E402
import lttngd  # noqa: E402
import wsrdb  # noqa: E402

STRAND_NS = 200000




# shape, args, expected spawn edges (from the printed construction), fully
# strict, strict.
SHAPES = [
    ('chain', ['8', '3000'], lambda c: c['n'], False, True),
    ('fanout', ['8', '3000'], lambda c: c['n'], True, True),
    ('pfor', ['8', '3000', '6000'], lambda c: c['n'], True, True),
    ('fib', ['9', '1000'], lambda c: c['loops'] - 1, True, True),
]


def meta(db):
    return dict(db.execute('SELECT key, value FROM meta'))


def check_shape(wsr, prog, procs, shape, args, spawns, fully, strict, tmp):
    out = os.path.join(tmp, shape)
    env = dict(os.environ, WSRMAXPROCS=str(procs))
    r = run([wsr, 'run', '--lossless', '--out', out, '--', prog, shape] + args, env=env)
    lines = [l for l in r.stdout.splitlines() if l.startswith('{"shape"')]
    if not ok(r.returncode == 0 and len(lines) == 1, '%s: wsr run' % shape,
              r.stdout[-1500:] + r.stderr[-1500:]):
        return
    c = json.loads(lines[0])
    dbpath = os.path.join(out, 'trace.db')
    db = wsrdb.connect(dbpath)
    m = meta(db)
    ok(m['discarded_events'] == 0 and m['gomaxprocs'] == procs,
       '%s: lossless recording at P=%d' % (shape, procs), m)
    work, span = m['work_ms'] * 1e6, m['span_ms'] * 1e6
    strands, crit = m['dag_strands'], m['dag_critical_strands']
    diag = 'trace work %.0f span %.0f; construction work %d span %d span_lo %d; ' \
        'strands %d critical %d' % (work, span, c['work_ns'], c['span_ns'], c['span_lo_ns'],
                                    strands, crit)
    rd = c['run_delay_ns']
    diag += '; run delay %d' % rd
    ok(c['work_ns'] <= work + 0.5, '%s: D <= work_ms' % shape, diag)
    ok(c['span_lo_ns'] <= span + 0.5, '%s: S_lo <= span_ms' % shape, diag)
    skip = '' if rd >= 0 else ' # SKIP no /proc/self/task/*/schedstat'
    ok(rd < 0 or work <= c['work_ns'] + strands * STRAND_NS + rd,
       '%s: work_ms <= D + strands * 200 us + R%s' % (shape, skip), diag)
    ok(rd < 0 or span <= c['span_ns'] + crit * STRAND_NS + rd,
       '%s: span_ms <= S + critical strands * 200 us + R%s' % (shape, skip), diag)
    print('# %s P=%d: %s; parallelism %.2f (construction %.2f), observed %.3f ms, '
          'lower %.3f, greedy %.3f, burdened span %.3f ms, external %.3f ms' % (
              shape, procs, diag, m['parallelism'], c['work_ns'] / c['span_ns'],
              m['observed_ms'], m['lower_bound_ms'], m['greedy_bound_ms'],
              m['burdened_span_ms'], m['external_wait_ms']))

    # Definitions and exact consequences.
    run_ns = db.execute("SELECT sum(end_ts - start_ts) FROM g_state WHERE state = 'running'"
                        ).fetchone()[0]
    ok(abs(work - run_ns) < 1, '%s: work == g_state running time' % shape, (work, run_ns))
    crit_sum, crit_n = db.execute('SELECT sum(end_ts - start_ts), count(*) FROM dag_strand '
                                  'WHERE critical = 1').fetchone()
    ok(abs(crit_sum - span) < 1 and crit_n == crit,
       '%s: the critical strands add up to span_ms' % shape, (crit_sum, span))
    # wsr run's database holds the critical path only; `wsr ingest --dag`
    # writes every strand and edge, with the same figures.
    fullpath = os.path.join(out, 'full.db')
    r = run([wsr, 'ingest', out, '--dag', '-q', '-o', fullpath])
    ok(r.returncode == 0, '%s: wsr ingest --dag' % shape, r.stderr[-1500:])
    full = wsrdb.connect(fullpath)
    mf = meta(full)
    same = [k for k in m if k.startswith(('dag_', 'work_', 'span_', 'burdened_'))
            and k != 'dag_tables' and mf.get(k) != m[k]]
    nst, crit_all = full.execute('SELECT count(*), sum(critical) FROM dag_strand').fetchone()
    ok(not same and mf['dag_tables'] == 'all' and m['dag_tables'] == 'critical' and
       nst == strands and crit_all == crit and
       full.execute('SELECT count(*) FROM dag_edge').fetchone()[0] == m['dag_edges'],
       '%s: --dag: every strand and edge, the same figures' % shape, (same, nst, crit_all))
    back = full.execute('SELECT count(*) FROM dag_edge WHERE src >= dst').fetchone()[0]
    late = full.execute('SELECT count(*) FROM dag_edge e JOIN dag_strand a ON a.id = e.src '
                        'JOIN dag_strand b ON b.id = e.dst WHERE a.end_ts > b.start_ts '
                        'OR e.delay_ns != b.start_ts - e.ts OR e.delay_ns < 0 '
                        'OR e.burden_ns < 0 OR e.burden_ns > e.delay_ns').fetchone()[0]
    ok(back == 0 and late == 0, '%s: every edge goes forward in id and time' % shape,
       (back, late))
    full.close()
    p = float(procs)
    ok(abs(m['parallelism'] - work / span) < 1e-6 * m['parallelism'] and
       abs(m['lower_bound_ms'] - max(m['work_ms'] / p, m['span_ms'])) < 1e-9 and
       abs(m['greedy_bound_ms'] - (m['work_ms'] / p + m['span_ms'])) < 1e-9 and
       abs(m['burdened_parallelism'] - m['work_ms'] / m['burdened_span_ms']) < 1e-9 *
       m['burdened_parallelism'], '%s: parallelism and bounds follow their definitions' % shape,
       m)
    ok(m['observed_ms'] + 1e-9 >= m['lower_bound_ms'],
       '%s: observed_ms >= max(T1/P, T_inf)' % shape, (m['observed_ms'], m['lower_bound_ms']))
    ok(m['delayed_span_ms'] + 1e-9 >= m['burdened_span_ms'] + 1e-9 >= m['span_ms'],
       '%s: delayed span >= burdened span >= span' % shape,
       (m['delayed_span_ms'], m['burdened_span_ms'], m['span_ms']))
    # Every strand but the first has an enabling edge, so every instant is
    # busy (<= T1/P in all) or on the last strand's chain (dag.c).
    ok(m['dag_roots'] == 1 and m['dag_unplaced'] == 0, '%s: one root, every event placed'
       % shape, (m['dag_roots'], m['dag_unplaced']))
    ok(m['observed_ms'] <= m['burdened_bound_ms'] + m['external_wait_ms'] + 1e-6,
       '%s: observed_ms <= T1/P + burdened span + external waits' % shape,
       (m['observed_ms'], m['burdened_bound_ms'], m['external_wait_ms']))
    ok(m['dag_spawn_edges'] == spawns(c), '%s: %d spawn edges' % (shape, spawns(c)),
       m['dag_spawn_edges'])
    ok(m['dag_fully_strict'] == int(fully) and m['dag_strict'] == int(strict),
       '%s: fully strict %s, strict %s' % (shape, fully, strict),
       'parent %d ancestor %d other %d runtime %d' % (
           m['dag_wakes_parent'], m['dag_wakes_ancestor'], m['dag_wakes_other'],
           m['dag_wakes_runtime']))

    # The report and the gate carry the same figures.
    r = run([wsr, 'report', dbpath, '--format', 'json'])
    try:
        j = json.loads(r.stdout)['work_span']
        good = r.returncode == 0 and abs(j['span_ms'] - m['span_ms']) < 1e-9 and \
            j['fully_strict'] == bool(fully)
    except (ValueError, KeyError) as e:
        good, r.stderr = False, r.stderr + str(e)
    ok(good, '%s: report json work_span' % shape, r.stderr + r.stdout[-500:])
    r = run([wsr, 'report', dbpath])
    ok(r.returncode == 0 and 'work and span' in r.stdout and
       ('not fully strict' in r.stdout) != fully, '%s: report text work and span' % shape,
       r.stdout[-1500:])
    r = run([wsr, 'check', dbpath, '--fail-if', 'span_ms > %.6f' % (m['span_ms'] * 1.001),
             '--fail-if', 'work_ms < %.6f' % (m['work_ms'] * 0.999)])
    r2 = run([wsr, 'check', dbpath, '--fail-if',
              'parallelism >= %.6f' % (m['parallelism'] * 0.999)])
    ok(r.returncode == 0 and r2.returncode == 1, '%s: wsr check span_ms / parallelism' % shape,
       r.stdout + r.stderr + r2.stdout + r2.stderr)
    db.close()


def check_scale(wsr, prog, tmp):
    """wsr scale at P = 1, 2, 3 (3: not a power of 2, so the sweep ends at it)."""
    out = os.path.join(tmp, 'scale')
    r = run([wsr, 'scale', '--out', out, '--max-procs', '3', '--', prog, 'fanout', '4', '1000'])
    if not ok(r.returncode == 0, 'wsr scale runs', r.stdout[-1500:] + r.stderr[-1500:]):
        return
    rows = [l for l in open(os.path.join(out, 'scale.md')).read().splitlines()
            if l.startswith('| ') and l[2].isdigit()]
    ok([int(l.split('|')[1]) for l in rows] == [1, 2, 3], 'scale.md has P = 1, 2, 3', rows)
    ok(rows == [l for l in r.stdout.splitlines() if l.startswith('| ') and l[2].isdigit()],
       'wsr scale prints scale.md')
    t_p, s1 = [], None
    for procs in (1, 2, 3):
        db = wsrdb.connect(os.path.join(out, 'p%d' % procs, 'trace.db'))
        m = meta(db)
        db.close()
        t_p.append(m['observed_ms'])
        s1 = m['peak_live_stacks'] if s1 is None else s1
        cells = [c.strip() for c in rows[procs - 1].split('|')[1:-1]]
        ok(cells[16] == str(m['peak_live_stacks']) and cells[17] == str(s1 * procs),
           'scale.md row P=%d: peak stacks and S1 x P' % procs, cells)
        ok(m['gomaxprocs'] == procs and cells[1] == '%.3f' % m['observed_ms'] and
           cells[6] == '%.3f' % m['work_ms'] and cells[8] == '%.3f' % m['span_ms'],
           'scale.md row P=%d == its trace.db' % procs, (cells, m['observed_ms']))
    cells = [c.strip() for c in rows[1].split('|')[1:-1]]
    ok(cells[2] == '%.2f' % (t_p[0] / t_p[1]), 'speed-up = T_P(1) / T_P(2)', cells)
    dbs = [os.path.join(out, 'p%d' % k, 'trace.db') for k in (1, 2)]
    works = []
    for d in dbs:
        c = wsrdb.connect(d)
        works.append(meta(c)['work_ms'])
        c.close()
    r = run([wsr, 'diff'] + dbs)
    ok(r.returncode == 0 and 'work inflation T1(new)/T1(base) = %.4f (P = 1 -> 2)'
       % (works[1] / works[0]) in r.stdout, 'wsr diff prints the work inflation', r.stdout[-600:])
    r = run([wsr, 'diff'] + dbs + ['--format', 'json'])
    try:
        good = abs(json.loads(r.stdout)['work_inflation'] - works[1] / works[0]) < 1e-12
    except (ValueError, KeyError):
        good = False
    ok(r.returncode == 0 and good, 'wsr diff --format json: work_inflation', r.stdout[-300:])
    html = open(os.path.join(out, 'scale.html')).read()
    ok('<svg' in html and 'observed speed-up' in html and 'greedy guarantee' in html and
       html.count('<polyline') == 5 and 'src=' not in html and 'href=' not in html,
       'scale.html: one self-contained SVG with five curves')
    ncpu = len(os.sched_getaffinity(0))
    ok(('CPU' in html and 'beyond this line' in html) == (3 > ncpu),
       'scale.html marks P beyond the %d CPUs' % ncpu)
    r = run([wsr, 'scale', '--out', out, '--', prog, 'fanout', '1', '1'])
    ok(r.returncode == 2 and 'not empty' in r.stderr, 'wsr scale into a non-empty DIR exits 2',
       r.stderr)
    r = run([wsr, 'scale', '--max-procs', '0', '--', prog])
    ok(r.returncode == 2, 'wsr scale --max-procs 0 exits 2', r.stderr)
    # A program whose path holds HTML's special characters, and a stdout that cannot be
    # written: the page escapes the name everywhere (title and table), and the lost table
    # on stdout is an error (exit 1), although the files are written.
    odd = os.path.join(tmp, 'a<b&c')
    os.mkdir(odd)
    os.symlink(os.path.abspath(prog), os.path.join(odd, 'ws-prog'))
    out2 = os.path.join(tmp, 'scale-odd')
    with open('/dev/full', 'w') as full:
        r = subprocess.run([wsr, 'scale', '--out', out2, '--max-procs', '1', '--',
                            os.path.join(odd, 'ws-prog'), 'fanout', '1', '1000'],
                           stdout=full, stderr=subprocess.PIPE, text=True)
    ok(r.returncode == 1 and 'writing the table to stdout' in r.stderr,
       'wsr scale > /dev/full exits 1 and says why', 'exit %d: %s' % (r.returncode, r.stderr))
    page = os.path.join(out2, 'scale.html')
    html = open(page).read() if os.path.exists(page) else ''
    ok(html and 'a<b&c' not in html and html.count('a&lt;b&amp;c') == 2,
       'scale.html escapes the program name in its title and its table',
       [l for l in html.splitlines() if 'a<b' in l or 'a&lt;b' in l][:4])


def main():
    wsr, prog, what = sys.argv[1], sys.argv[2], sys.argv[3]
    with tempfile.TemporaryDirectory(prefix='wsr-workspan-') as tmp:
        if what == 'scale':
            check_scale(wsr, prog, tmp)
        else:
            for shape, args, spawns, fully, strict in SHAPES:
                check_shape(wsr, prog, int(what), shape, args, spawns, fully, strict, tmp)
    return done()


if __name__ == '__main__':
    # One share of the session daemon for the whole test (tests/lib/lttngd.py), so that
    # its wsr runs, one after the other, do not each start and stop a daemon.
    with lttngd.SharedDaemon():
        rc = main()
    sys.exit(rc)
