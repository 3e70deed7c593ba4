#!/usr/bin/env python3
# fidelity.py - the differential fidelity harness (tests/fidelity/README.md): records one
# case at WSRMAXPROCS 1, 2 and 8 with `wsr run --lossless`, ingests each trace and checks
# the database against the runtime's own `WSRDEBUG=stats=1` counters, babeltrace2's reading
# of the same trace and the physical rules of a scheduler; then records it once lossy
# (2 x 4 KiB sub-buffers) and checks that every figure stays inside its physical bounds and
# that the loss is shown where it happened.
#
# Usage: fidelity.py WSR CASE EXE        (TAP on stdout; exit 0 pass, 1 fail)
#   CASE: sched, chaos, io, deadlock, abort, segv, exit (the table CASES below).
#   WSR_FIDELITY_PROCS=1,2,8 overrides the lossless gomaxprocs list; WSR_SEED the chaos
#   seed; WSR_KEEP_TRACES=1 keeps the traces (the path is printed).
#
# Invariants:
#   - No check has a tolerance: a lossless trace must agree exactly. The only
#     exception is the one the schedtrace_check view itself states: a row whose
#     `explained` column is 1 names the racing event (`racing`) that explains it.
#   - A check that cannot run (no database because ingest failed, no stats line because
#     the process died by a signal) is reported as such, never as a pass.
# Concurrency: one recording at a time (meson runs these tests serially).
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'tracing'))
sys.path.insert(0, os.path.join(HERE, '..', 'lib'))
from tap import done, failed, note, ok, run  # noqa: E402
import check_trace  # noqa: E402  (babeltrace2 reader, stats line parser)
import test_run  # noqa: E402  (Sessiond)
import wsrdb  # noqa: E402

MAX_SAMPLES = 5
# `wsr run` takes 1-10 s here (TSan included); past this it hangs (e.g. in `lttng stop`).
RUN_TIMEOUT = int(os.environ.get('WSR_FIDELITY_RUN_TIMEOUT', '120'))
SCHEDTRACE_MS = 2
# Recordings of a run whose trace `lttng stop` could not flush (record()).
UNFLUSHED_TRIES = 3
# Events that sysmon emits about another thread's P and M (docs/tracepoints.md), and
# spin_start and m_unpark, which the waker emits for the M it starts: their tid is not the
# M's own.
NOT_OWN_TID = ('retake', 'handoff', 'preempt', 'schedtrace', 'spin_start', 'm_unpark')

# case: (program arguments, extra WSRDEBUG, expected `wsr run` exit status, whether the
# runtime prints its stats line, events the case must produce in at least one lossless run,
# (table, from state, to state) transitions it must produce in at least one).
CASES = {
    'sched': ([], '', 0, True,
              'init knobs g_create runqput runq_spill globrunq_put globrunq_get g_run g_stop g_ready '
              'steal steal_scan spin_start spin_stop p_idle p_busy m_park m_unpark m_create '
              'preempt timer_fire netpoll schedtrace',
              [('g', 'runnable', 'running'), ('g', 'running', 'runnable'),
               ('g', 'running', 'waiting'), ('g', 'waiting', 'runnable'),
               ('p', 'running', 'idle'), ('p', 'idle', 'running'), ('p', 'running', 'spinning'),
               ('p', 'spinning', 'running'), ('m', 'running', 'spinning'),
               ('m', 'spinning', 'running'), ('m', 'parked', 'spinning')]),
    'chaos': ([], 'chaos=%s', 0, True,
              'init g_create runqput runq_spill globrunq_get g_run g_stop g_ready steal '
              'spin_start spin_stop p_idle p_busy m_park m_unpark preempt timer_fire schedtrace',
              [('g', 'runnable', 'running'), ('g', 'running', 'waiting')]),
    'io': ([], '', 0, True,
           'init g_create runqput globrunq_put globrunq_get g_run g_stop g_ready syscall_enter '
           'syscall_exit retake handoff timer_fire netpoll m_create m_park m_unpark schedtrace',
           [('g', 'running', 'syscall'), ('g', 'syscall', 'running'),
            ('g', 'syscall', 'runnable'), ('g', 'running', 'waiting'),
            ('p', 'running', 'syscall'), ('p', 'syscall', 'running'),
            ('m', 'running', 'syscall'), ('m', 'syscall', 'running'), ('m', 'syscall', 'no_p'),
            ('m', 'parked', 'running')]),
    # policy=locked: a thief waits for a deque lock held on purpose (fid-lock.c).
    'lockwait': ([], 'policy=locked', 0, True,
                 'init knobs g_create runqput g_run g_stop steal steal_scan steal_lock_wait',
                 [('g', 'runnable', 'running')]),
    'deadlock': (['deadlock'], '', 2, True,
                 'init g_create runqput runq_spill g_run g_stop g_ready timer_fire m_park',
                 [('g', 'running', 'waiting')]),
    'abort': (['abort'], '', 128 + 6, False, 'init g_create runqput g_run g_stop timer_fire',
              [('g', 'running', 'waiting')]),
    'segv': (['segv'], '', 128 + 11, False, 'init g_create runqput g_run g_stop timer_fire',
             [('g', 'running', 'waiting')]),
    'exit': (['exit'], '', 3, True, 'init g_create runqput g_run g_stop timer_fire',
             [('g', 'running', 'waiting')]),
}





def meta(db, key):
    r = db.execute('SELECT value FROM meta WHERE key = ?', (key,)).fetchone()
    return None if r is None else r[0]


def sample(rows, most=MAX_SAMPLES):
    rows = list(rows)
    s = '\n'.join(str(r) for r in rows[:most])
    return s + ('\n... %d in all' % len(rows) if len(rows) > most else '')


def record(wsr, tmp, name, label, exe, args, env_extra, run_args):
    """`wsr run --no-ingest RUN_ARGS --out TMP/NAME -- EXE ARGS`, then `wsr ingest`.

    Returns (exit status, program stderr, trace dir, database path or None)."""
    out = os.path.join(tmp, name)
    env = dict(os.environ)
    env.update(env_extra)
    for san in ('ASAN_OPTIONS', 'TSAN_OPTIONS'):
        if san in env and 'segv' in args:
            # The fault must kill the program as it does unsanitized (SIGSEGV), not end in
            # the sanitizer's report and its exit status.
            env[san] += ' handle_segv=0'
    for attempt in range(1, UNFLUSHED_TRIES + 1):
        rc, err = run_bounded([wsr, 'run', '--no-ingest', '--out', out] + run_args + ['--', exe]
                              + args, env, label)
        if rc is None:
            return None, err, out, None
        # A program killed while one of its threads wrote an event leaves that sub-buffer
        # uncommitted, and `lttng stop` gives up on it (docs/recording.md, step 6): the
        # trace's end is unknown, so nothing can be compared with it. wsr run says so
        # ("flushed": false, checked by wsr-run-tool-hangs); record the run again.
        try:
            with open(os.path.join(out, 'wsr-run.json')) as f:
                flushed = json.load(f).get('flushed', True)
        except (OSError, ValueError):
            flushed = True  # no record: ingest below says what is wrong
        if flushed is not False:
            break
        ok('still had data' in err, '%s: wsr run says it stopped without the last data' % label,
           err[-800:])
        if attempt == UNFLUSHED_TRIES:
            ok(False, '%s: a trace that the tracer flushed in %d attempts' % (label, attempt))
            return rc, err, out, None
        note('%s: attempt %d: `lttng stop` gave up on the tracer\'s last data (a thread was '
             'killed while writing an event): recording again' % (label, attempt))
        shutil.rmtree(out)
    db = os.path.join(tmp, name + '.db')
    r = run([wsr, 'ingest', out, '-o', db, '--quiet'])
    ingested = ok(r.returncode == 0 and os.path.exists(db),
                  '%s: wsr ingest reads the trace' % label,
                  'exit %d: %s' % (r.returncode, r.stderr.strip()[-1500:]))
    return rc, err, out, db if ingested else None


def run_bounded(argv, env, label):
    """Runs `wsr run` in its own process group; (exit status, stderr), or (None, stderr) if it
    has not finished after RUN_TIMEOUT s (then the group is killed and its LTTng session
    destroyed, so no session or process is left behind)."""
    with tempfile.TemporaryFile(mode='w+') as so, tempfile.TemporaryFile(mode='w+') as se:
        p = subprocess.Popen(argv, stdout=so, stderr=se, env=env, text=True,
                             start_new_session=True)
        try:
            rc = p.wait(timeout=RUN_TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            rc = None
            sessions = run(['lttng', 'list']).stdout
            for s in sorted(set(re.findall(r'wsr-%d-[0-9-]+' % p.pid, sessions))):
                run(['lttng', 'destroy', '--no-wait', s])
        se.seek(0)
        err = se.read()
    if rc is None:
        ok(False, '%s: wsr run finishes (killed after %d s)' % (label, RUN_TIMEOUT), err[-1500:])
    return rc, err


def catalog():
    root = os.environ.get('WSR_SOURCE_ROOT', os.path.join(HERE, '..', '..'))
    sys.path.insert(0, os.path.join(root, 'tracepoints'))
    import gen_catalog  # the catalog's one definition (tracepoints/catalog.toml)
    cat = gen_catalog.load(os.path.join(root, 'tracepoints', 'catalog.toml'))
    return sorted(e['name'] for e in cat['event'])


# ---- (a) counts ----------------------------------------------------------------------

def check_counts(db, label, stats, trace, has_stats):
    counts = dict(db.execute('SELECT name, n FROM event_counts'))
    ck = check_trace.Checker(quiet=True)
    rules = check_trace.Sequences(ck)
    bt = Counter()
    for name, fields in check_trace.read_trace(trace):
        bt[name] += 1
        rules.event(name, fields)
    ok(not ck.errors, '%s: (a) the trace keeps the sequence rules of docs/tracepoints.md' % label,
       sample(ck.errors))
    names = catalog()
    bad = ['%s: database %d, babeltrace2 %d' % (n, counts.get(n, 0), bt.get(n, 0))
           for n in names if counts.get(n, 0) != bt.get(n, 0)]
    bad += ['%s: in the database, not in the catalog' % n for n in counts if n not in names]
    ok(not bad, '%s: (a) every per-kind count equals babeltrace2\'s' % label, sample(bad))
    if stats is None:
        note('%s: (a) no stats line (%s): compared with babeltrace2 only' % (
            label, 'a failure above' if has_stats else
            'the process dies by a signal, so the runtime prints no counters'))
        return counts
    bad = ['%s: database %d, runtime %d' % (n, counts.get(n, 0), stats.get(n))
           for n in names if counts.get(n, 0) != stats.get(n)]
    nxt = db.execute("SELECT count(*) FROM events WHERE name = 'runqput' AND a1 = 1").fetchone()[0]
    if nxt != stats.get('runqput_next'):
        bad.append('runqput_next: database %d, runtime %s' % (nxt, stats.get('runqput_next')))
    stolen = db.execute("SELECT coalesce(sum(a2), 0) FROM events WHERE name = 'steal'").fetchone()[0]
    if stolen != stats.get('stolen'):
        bad.append('stolen: database %d, runtime %s' % (stolen, stats.get('stolen')))
    ok(not bad, '%s: (a) every per-kind count equals the runtime\'s stats=1 counter' % label,
       sample(bad))
    return counts


# ---- (b) tiling ----------------------------------------------------------------------

def chain_breaks(rows, first, last):
    """rows: (key, start, end) ordered by key, start. first/last: key -> required bounds."""
    bad = []
    prev_key, prev_end = None, None
    ends = {}
    for key, s, e in rows:
        if e < s:
            bad.append('%s: reversed interval [%d, %d)' % (key, s, e))
        if key != prev_key:
            want = first.get(key)
            if want is not None and s != want:
                bad.append('%s: first interval starts at %d, want %d (%+d ns)' % (key, s, want,
                                                                                  s - want))
        elif s != prev_end:
            bad.append('%s: %s at %d (previous ends %d, %+d ns)' %
                       (key, 'gap' if s > prev_end else 'overlap', s, prev_end, s - prev_end))
        prev_key, prev_end = key, e
        ends[key] = e
    for key, e in ends.items():
        want = last(key)
        if e != want:
            bad.append('%s: last interval ends at %d, want %d (%+d ns)' % (key, e, want, e - want))
    return bad


def check_tiling(db, label):
    end = int(meta(db, 'end_ts'))
    init = db.execute("SELECT min(ts) FROM events WHERE name = 'init'").fetchone()[0]
    gend = dict(db.execute('SELECT g, end_ts FROM g'))
    created = dict(db.execute('SELECT g, created_ts FROM g'))
    nocreate = [g for g, c in created.items() if c is None]
    ok(not nocreate, '%s: (b) every G has its created_ts' % label, sample(nocreate))
    rows = db.execute('SELECT g, start_ts, end_ts FROM g_state ORDER BY g, start_ts, rowid')
    bad = chain_breaks(rows, created, lambda g: gend.get(g) if gend.get(g) is not None else end)
    ok(not bad, '%s: (b) per G, g_state tiles [created_ts, end_ts or trace end]' % label,
       sample(bad))
    nps = int(meta(db, 'gomaxprocs'))
    rows = db.execute('SELECT p, start_ts, end_ts FROM p_state ORDER BY p, start_ts, rowid')
    bad = chain_breaks(rows, {p: init for p in range(nps)}, lambda p: end)
    have = {r[0] for r in db.execute('SELECT DISTINCT p FROM p_state')}
    bad += ['P%d has no p_state row' % p for p in range(nps) if p not in have]
    ok(not bad, '%s: (b) per P, p_state tiles [init, trace end]' % label, sample(bad))
    mcreated = dict(db.execute('SELECT m, created_ts FROM m'))
    rows = db.execute('SELECT m, start_ts, end_ts FROM m_state ORDER BY m, start_ts, rowid')
    bad = chain_breaks(rows, mcreated, lambda m: end)
    bad += ['M%d has no m row' % m for (m,) in db.execute(
        'SELECT DISTINCT m FROM m_state WHERE m NOT IN (SELECT m FROM m)')]
    ok(not bad, '%s: (b) per M, m_state tiles [m.created_ts, trace end]' % label, sample(bad))
    late = db.execute('SELECT m.m, m.created_ts, min(s.start_ts) FROM m JOIN m_state s '
                      'ON s.m = m.m GROUP BY m.m HAVING m.created_ts IS NULL '
                      'OR m.created_ts > min(s.start_ts)').fetchall()
    ok(not late, '%s: (b) no m.created_ts later than the M\'s first interval' % label,
       sample('M%d created_ts %s, first interval %d' % r for r in late))
    cut = []
    for t in ('g_state', 'p_state', 'm_state'):
        cut += ['%s %s' % (t, r) for r in db.execute(
            'SELECT * FROM %s WHERE cut = 1 AND end_ts != ?' % t, (end,))]
    ok(not cut, '%s: (b) only intervals that reach the trace end are cut' % label, sample(cut))


# ---- (c) running Gs -------------------------------------------------------------------

def overlaps(rows, verb='runs G'):
    """rows: (key, start, end, what) ordered by key, start: overlapping pairs per key."""
    bad = []
    prev = {}
    for key, s, e, what in rows:
        if key in prev and s < prev[key][1]:
            bad.append('%s %s%s [%d, %d) and %s%s until %d' % (key, verb, what, s, e, verb,
                                                               prev[key][2], prev[key][1]))
        if key not in prev or e > prev[key][1]:
            prev[key] = (s, e, what)
    return bad


def max_running(db):
    """The most running g_state intervals open at once, and when."""
    evs = []
    for s, e in db.execute("SELECT start_ts, end_ts FROM g_state WHERE state = 'running'"):
        evs.append((s, 1))
        evs.append((e, -1))
    evs.sort(key=lambda x: (x[0], x[1]))  # an interval ending at t is closed before one opens
    cur = best = 0
    when = None
    for t, d in evs:
        cur += d
        if cur > best:
            best, when = cur, t
    return best, when


def check_running(db, label, lossy=False):
    nps = int(meta(db, 'gomaxprocs'))
    nullp = db.execute("SELECT count(*) FROM g_state WHERE state = 'running' AND "
                       "(p IS NULL OR m IS NULL OR p < 0 OR p >= ?)", (nps,)).fetchone()[0]
    ok(nullp == 0, '%s: (c) every running interval names its P (0..%d) and M' % (label, nps - 1),
       nullp)
    for col in ('p', 'm'):
        rows = db.execute("SELECT %s, start_ts, end_ts, g FROM g_state WHERE state = 'running' "
                          "AND %s IS NOT NULL ORDER BY %s, start_ts" % (col, col, col))
        bad = overlaps(('%s%d' % (col.upper(), k), s, e, g) for k, s, e, g in rows)
        ok(not bad, '%s: (c) no %s runs two Gs at once' % (label, col.upper()), sample(bad))
    for t, k in (('p_state', 'p'), ('m_state', 'm')):
        bad = db.execute(
            "SELECT g.g, g.start_ts, g.end_ts, s.%s, s.state, s.start_ts, s.end_ts FROM g_state g "
            "JOIN %s s ON s.%s = g.%s AND s.start_ts < g.end_ts AND s.end_ts > g.start_ts "
            "WHERE g.state = 'running' AND g.end_ts > g.start_ts AND s.state != 'running'"
            % (k, t, k, k)).fetchall()
        ok(not bad, '%s: (c) a G runs only while its %s is running (%s)' % (label, k.upper(), t),
           sample('G%d [%d, %d) on %s%d, which is %s over [%d, %d)' % (r[0], r[1], r[2], k.upper(),
                  r[3], r[4], r[5], r[6]) for r in bad))
    best, when = max_running(db)
    ok(best <= nps, '%s: (c) running Gs never exceed gomaxprocs=%d (g_state sweep)' % (label, nps),
       '%d running at ts %s' % (best, when))
    mx = db.execute('SELECT max(running_gs), min(running_gs) FROM counters').fetchone()
    row = db.execute('SELECT ts, running_gs FROM counters WHERE running_gs > ? OR running_gs < 0 '
                     'LIMIT 1', (nps,)).fetchone()
    ok(row is None, '%s: (c) counters.running_gs stays in [0, gomaxprocs=%d]' % (label, nps),
       'max %s min %s; first out of bounds: %s' % (mx[0], mx[1], row))
    if lossy:
        for t, k in (('p_state', 'p'), ('m_state', 'm')):
            rows = db.execute('SELECT %s, start_ts, end_ts, state FROM %s ORDER BY %s, start_ts'
                              % (k, t, k))
            named = [('%s%d' % (k.upper(), key), s, e, st) for key, s, e, st in rows]
            bad = overlaps(named, 'is ')
            ok(not bad, '%s: no %s is in two states at once (%s)' % (label, k.upper(), t),
               sample(bad))


# ---- (d) tids -------------------------------------------------------------------------

def check_tids(db, label):
    q = ('SELECT m, tid, name, count(*) FROM events WHERE m >= 0 AND name NOT IN (%s) '
         'GROUP BY m, tid, name' % ','.join('?' * len(NOT_OWN_TID)))
    emitted = defaultdict(Counter)
    for m, tid, name, n in db.execute(q, NOT_OWN_TID):
        emitted[m][tid] += n
    mtid = dict(db.execute('SELECT m, tid FROM m'))
    bad = []
    for m, tids in sorted(emitted.items()):
        if m not in mtid:
            bad.append('M%d emits events but has no m row' % m)
        elif set(tids) != {mtid[m]}:
            bad.append('M%d: m.tid %s, its own events come from tids %s' % (m, mtid[m],
                                                                           dict(tids)))
    ok(not bad, '%s: (d) m.tid is the tid of every event the M emits itself' % label, sample(bad))
    dup = [(t, ms) for t, ms in _group(mtid).items() if len(ms) > 1]
    ok(not dup, '%s: (d) no two Ms share a tid' % label, sample(dup))
    vpid = meta(db, 'vpid')
    ok(0 in mtid and str(mtid[0]) == str(vpid), '%s: (d) M0\'s tid is the process id' % label,
       'M0 tid %s, vpid %s' % (mtid.get(0), vpid))
    others = db.execute('SELECT name, tid, count(*) FROM events WHERE m < 0 AND tid IN '
                        '(SELECT tid FROM m) GROUP BY name, tid').fetchall()
    ok(not others, '%s: (d) events with m = -1 come from no M\'s thread' % label, sample(others))


def _group(d):
    out = defaultdict(list)
    for k, v in d.items():
        out[v].append(k)
    return out


# ---- (e) schedtrace -------------------------------------------------------------------

# Cases that run long enough (tens of ms at 2 ms a snapshot) that a run with
# no snapshot means a fault, not a sysmon that never got a CPU; the short
# cases (the abnormal ends, a few ms) may see none on a loaded machine.
LONG_CASES = ('sched', 'chaos', 'io')


def check_schedtrace(db, label, counts, err, stats, case):
    n = counts.get('schedtrace', 0)
    if n == 0 and case not in LONG_CASES:
        # Nothing to compare. Whether the trace holds every snapshot the
        # runtime emitted is check_counts' business (the stats line).
        note('%s: (e) no schedtrace snapshot in this run (the runtime%s); nothing to compare'
             % (label, ' emitted none: its sysmon did not tick during the run'
                if stats is not None and stats.get('schedtrace') == 0 else
                ' printed no stats line to say whether it emitted any'))
        return
    if not ok(n > 0, '%s: (e) the runtime emitted schedtrace snapshots' % label, n):
        return
    cur = db.execute('SELECT * FROM schedtrace_check ORDER BY ts')
    cols = [d[0] for d in cur.description]
    rows = [dict(zip(cols, r)) for r in cur]
    pairs = [(c[3:], c) for c in cols if c.startswith('rt_') and c[3:] in cols]
    names = [p[0] for p in pairs]
    for want in ('gomaxprocs', 'idleprocs', 'threads', 'spinningthreads', 'idlethreads',
                 'runqueue', 'runq'):
        if want not in names:
            ok(False, '%s: (e) schedtrace_check compares %s' % (label, want), cols)
    if 'schedticks' not in names:
        check_live_schedticks(db, label, err)
    has_expl = 'explained' in cols
    ok(len(rows) == n, '%s: (e) one schedtrace_check row per schedtrace event' % label,
       '%d rows, %d events' % (len(rows), n))
    bad, explained, unchecked = [], 0, 0
    for r in rows:
        diff = [f for f, rt in pairs if not _same(r[rt], r[f])]
        if not diff:
            continue
        if has_expl and r['explained'] == 1 and r.get('racing'):
            explained += 1
            continue
        if has_expl and r['explained'] is None:
            unchecked += 1  # a read window older than the check's history
            continue
        bad.append('t=%s ns: %s' % (r.get('t'), ', '.join(
            ('%s rt=%s != rec=%s' % (f, r[rt], r[f])) if f in diff else '%s %s' % (f, r[f])
            for f, rt in pairs)) +
            (' (explained=%s racing=%s)' % (r['explained'], r.get('racing')) if has_expl else ''))
    if explained:
        note('%s: (e) %d of %d snapshots differ with the racing event named' % (label, explained,
                                                                                len(rows)))
    if unchecked:
        note('%s: (e) %d of %d snapshots differ in a field that could not be checked (read '
             'window older than the history kept: schedtrace_fields.explained NULL)'
             % (label, unchecked, len(rows)))
    ok(unchecked < len(rows), '%s: (e) some snapshot could be checked' % label,
       '%d of %d not checkable' % (unchecked, len(rows)))
    ok(not bad, '%s: (e) every schedtrace snapshot agrees field by field%s (%d snapshots)'
       % (label, ' or names its racing event' if has_expl else '', len(rows)),
       '%d of %d snapshots differ:\n%s' % (len(bad), len(rows), sample(bad, 30)))


LIVE_RE = re.compile(r'^SCHED \d+ms: .* schedticks=\[ ([\d ]*)\]$')


def check_live_schedticks(db, label, err):
    """Without rt_schedticks in schedtrace_check: the runtime's SCHED lines on stderr (one per
    schedtrace event, printed right after it under the same lock, so in the same order) against
    the reconstruction's per-P schedticks at each event."""
    live = [[int(x) for x in m.group(1).split()] for m in map(LIVE_RE.match, err.splitlines())
            if m]
    ts = [r[0] for r in db.execute("SELECT ts FROM events WHERE name = 'schedtrace' ORDER BY ts")]
    nps = int(meta(db, 'gomaxprocs'))
    if not ok(len(live) == len(ts), '%s: (e) one live SCHED line per schedtrace event' % label,
              '%d lines, %d events' % (len(live), len(ts))):
        return
    bad = []
    for t, rt in zip(ts, live):
        rec = [db.execute('SELECT coalesce((SELECT schedticks FROM p_counters WHERE p = ? AND '
                          'ts <= ? ORDER BY ts DESC LIMIT 1), 0)', (p, t)).fetchone()[0]
               for p in range(nps)]
        if rec != rt:
            bad.append('ts %d: schedticks rt=%s rec=%s' % (t, rt, rec))
    ok(not bad, '%s: (e) schedticks of every snapshot equal the runtime\'s (its SCHED lines; '
       'schedtrace_check has no rt_schedticks)' % label,
       '%d of %d snapshots differ:\n%s' % (len(bad), len(ts), sample(bad)))


def _same(a, b):
    if isinstance(a, str) or isinstance(b, str):
        try:
            return json.loads(a) == json.loads(b)
        except (TypeError, ValueError):
            return a == b
    return a == b


# ---- coverage -------------------------------------------------------------------------

def transitions(db):
    out = set()
    for t, k in (('g', 'g'), ('p', 'p'), ('m', 'm')):
        q = ('SELECT DISTINCT prev, state FROM (SELECT state, lag(state) OVER (PARTITION BY %s '
             'ORDER BY start_ts, rowid) AS prev FROM %s_state) WHERE prev IS NOT NULL' % (k, t))
        out |= {(t, a, b) for a, b in db.execute(q)}
    return out


# ---- lossless and lossy runs ------------------------------------------------------------

def lossless(wsr, tmp, case, exe, procs, seen, trans):
    args, dbg, want_rc, has_stats, _, _ = CASES[case]
    label = '%s P=%d' % (case, procs)
    env = {'WSRMAXPROCS': str(procs), 'WSRDEBUG': debug_env(dbg)}
    rc, err, trace, dbpath = record(wsr, tmp, 'lossless-%d' % procs, label, exe, args, env,
                                    ['--lossless'])
    ok(rc == want_rc, '%s: wsr run --lossless exits %d' % (label, want_rc),
       'exit %s\n%s' % (rc, err[-1500:]))
    stats = None
    if has_stats:
        errf = os.path.join(tmp, 'lossless-%d.stderr' % procs)
        with open(errf, 'w') as f:
            f.write(err)
        stats = check_trace.parse_stats(errf)
        ok(stats is not None, '%s: the runtime printed its stats line' % label, err[-800:])
    if dbpath is None:
        note('%s: no database: checks (a)-(e) cannot run' % label)
        return
    db = wsrdb.connect(dbpath)
    try:
        with open(os.path.join(trace, 'wsr-run.json')) as f:
            runrec = json.load(f)
        ok(int(meta(db, 'discarded_events')) == 0 and runrec.get('discarded_events') == 0,
           '%s: the lossless recording lost nothing' % label,
           'meta %s, wsr-run.json %s' % (meta(db, 'discarded_events'),
                                         runrec.get('discarded_events')))
        counts = check_counts(db, label, stats, trace, has_stats)
        seen.update(k for k, v in counts.items() if v > 0)
        trans |= transitions(db)
        check_tiling(db, label)
        check_running(db, label)
        check_tids(db, label)
        check_schedtrace(db, label, counts, err, stats, case)
        report_bounds(wsr, dbpath, label, int(meta(db, 'gomaxprocs')))
    finally:
        db.close()


def debug_env(dbg):
    # The caller's knobs (WSRDEBUG=policy=deque, say) first; ours win.
    parts = [p for p in os.environ.get('WSRDEBUG', '').split(',') if p]
    parts += ['stats=1', 'schedtrace=%d' % SCHEDTRACE_MS]
    if '%s' in dbg:
        seed = os.environ.get('WSR_SEED', '7')
        note('chaos seed %s (WSR_SEED=N to change it)' % seed)
        parts.append(dbg % seed)
    elif dbg:
        parts.append(dbg)
    return ','.join(parts)


def walk_json(v, path=''):
    if isinstance(v, dict):
        for k, x in v.items():
            yield from walk_json(x, path + '.' + k)
    elif isinstance(v, list):
        for i, x in enumerate(v):
            yield from walk_json(x, '%s[%d]' % (path, i))
    else:
        yield path, v


def lossy(wsr, tmp, case, exe):
    args, dbg, want_rc, _, _, _ = CASES[case]
    label = '%s lossy P=2' % case
    # The burst (burst.h): 5,000 empty Gs first, so that the run loses events
    # whatever the case does after them.
    env = {'WSRMAXPROCS': '2', 'WSRDEBUG': debug_env(dbg), 'WSR_FIDELITY_BURST': '5000'}
    rc, err, trace, dbpath = record(wsr, tmp, 'lossy', label, exe, args, env,
                                    ['--subbuf-size', '4k', '--num-subbuf', '2'])
    ok(rc == want_rc, '%s: wsr run exits %d' % (label, want_rc), 'exit %s\n%s' % (rc, err[-800:]))
    if dbpath is None:
        note('%s: no database: the bounds cannot be checked' % label)
        return
    db = wsrdb.connect(dbpath)
    try:
        nps = int(meta(db, 'gomaxprocs'))
        lost = int(meta(db, 'discarded_events'))
        if not ok(lost > 0, '%s: the run lost events (meta.discarded_events > 0)' % label, lost):
            return
        with open(os.path.join(trace, 'wsr-run.json')) as f:
            runrec = json.load(f)
        start, end = int(meta(db, 'start_ts')), int(meta(db, 'end_ts'))
        dur = end - start
        rows = db.execute("SELECT stream, begin_ts, end_ts, count FROM discarded "
                          "WHERE kind = 'events'").fetchall()
        # A loss of unknown size (count NULL: the tracer's counter went backwards, seen
        # under load) counts as 1 in meta and is counted in meta.discarded_uncounted;
        # wsr-run.json reads the same counters, so it is compared when none is unknown.
        uncounted = int(meta(db, 'discarded_uncounted') or 0)
        total = sum(r[3] for r in rows if r[3] is not None)
        ok(uncounted == sum(1 for r in rows if r[3] is None) and total + uncounted == lost and
           (uncounted > 0 or lost == runrec.get('discarded_events')),
           '%s: the discarded rows add up to meta.discarded_events and wsr-run.json' % label,
           'rows %d (+%d of unknown size), meta %d, wsr-run.json %s'
           % (total, uncounted, lost, runrec.get('discarded_events')))
        # A loss's interval is its packet's: the lost events may lie after the last event
        # kept (meta.end_ts) or before the first, so only its own order is a bound.
        bad = [r for r in rows if (r[3] is not None and r[3] <= 0) or r[1] is None or
               r[2] is None or r[1] > r[2]]
        ok(not bad, '%s: each loss is placed: a stream, begin_ts <= end_ts, count > 0 or '
           'unknown' % label, sample(bad))
        over = db.execute("SELECT p, state, ns FROM p_time WHERE ns > ? OR ns < 0",
                          (dur,)).fetchall()
        ok(not over, '%s: p_time: no P state longer than the run (<= 100%%)' % label,
           sample('P%s %s %.1f%%' % (p, s, 100.0 * ns / dur) for p, s, ns in over))
        over = db.execute("SELECT p, sum(ns) FROM p_time GROUP BY p HAVING sum(ns) > ?",
                          (dur,)).fetchall()
        ok(not over, '%s: p_time: the states of a P add up to <= 100%% of the run' % label,
           sample('P%s %.1f%%' % (p, 100.0 * ns / dur) for p, ns in over))
        over = db.execute('SELECT p, ns FROM p_run_time WHERE ns > ? OR ns < 0', (dur,)).fetchall()
        ok(not over, '%s: p_run_time: Gs ran on no P for more than 100%% of the run' % label,
           sample('P%s %.1f%%' % (p, 100.0 * ns / dur) for p, ns in over))
        check_running(db, label, lossy=True)
        r = run([wsr, 'report', dbpath, '--format', 'json'])
        if not ok(r.returncode == 0, '%s: wsr report --format json' % label, r.stderr[-800:]):
            return
        rep = json.loads(r.stdout)
        check_report(rep, label, nps)
        listed = sorted((d.get('stream'), d.get('begin_ts'), d.get('end_ts'), d.get('count'))
                        for d in rep.get('discarded', []) if d.get('kind') == 'events')
        ok(listed == sorted(rows), '%s: report: lists every loss with its stream and times'
           % label, 'report %s\ntable %s' % (listed[:5], sorted(rows)[:5]))
        m = rep.get('metrics', {})
        ok(m.get('discarded_events') == lost and rep.get('lossy') is True and any(
            d.get('id') == 'discarded' for d in rep.get('diagnostics', [])),
           '%s: report: lossy, discarded_events = %d, a "discarded" diagnostic' % (label, lost),
           json.dumps({k: rep.get(k) for k in ('lossy', 'diagnostics')})[:1500])
        r = run([wsr, 'report', dbpath])
        text = r.stdout + r.stderr
        want = ['discarded: %d events' % lost, 'events were lost']
        places = ['%s events lost on cpu %d (stream %s)' % ('?' if n is None else n, cpu, st)
                  for st, cpu, n in
                  db.execute("SELECT stream, cpu, count FROM discarded WHERE kind = 'events' "
                             "ORDER BY begin_ts")]
        # Every place is listed, or the report says how many it leaves out ("N more").
        # Two places can read alike (same count, same stream): compare the report's
        # lines with the table as multisets, whole lines (98 is in 198).
        shown = Counter('%s events lost on cpu %s (stream %s)' % m for m in re.findall(
            r'^\s*(?:- )?(\S+) events lost on cpu (\d+) \(stream (.*?)\) between ', text, re.M))
        have = Counter(places)
        unlisted = [w for w, n in have.items() for _ in range(n - min(n, shown[w]))]
        missing = [w for w in want if w not in text]
        if unlisted and not re.search(r'\b%d more\b' % len(unlisted), text):
            missing += unlisted
        ok(r.returncode == 0 and not missing,
           '%s: the text report says %d events were lost, and where' % (label, lost),
           'missing: %s\n%s' % (missing, text[:1200]))
        neg = re.findall(r'(?<![\w.])-\d[\d.]*\S*', text)
        ok(not neg, '%s: the text report shows no negative figure' % label, sample(neg))
    finally:
        db.close()


def report_bounds(wsr, dbpath, label, nps):
    r = run([wsr, 'report', dbpath, '--format', 'json'])
    if ok(r.returncode == 0, '%s: wsr report --format json' % label, r.stderr[-800:]):
        check_report(json.loads(r.stdout), label, nps)


def check_report(rep, label, nps):
    threads = rep.get('metrics', {}).get('threads') or 0
    bad = []
    for path, v in walk_json(rep):
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            continue
        key = path.rsplit('.', 1)[-1]
        if key.endswith('_pct'):
            # % of one CPU (docs/report.md): at most one CPU per thread.
            hi = 100.0 * max(threads, 1) if key == 'spin_cpu_pct' else 100.0
            if not 0 <= v <= hi:
                bad.append('%s = %s (bounds [0, %g])' % (path, v, hi))
        elif v < 0 and not path.endswith('_ts'):
            bad.append('%s = %s (a count or time below 0)' % (path, v))
    ok(not bad, '%s: report: every percentage in its bounds, every figure >= 0' % label,
       sample(bad))
    procs = rep.get('procs', [])
    bad = []
    for pr in procs:
        s = sum(v for k, v in pr.items() if k.endswith('_pct') and k != 'running_pct')
        s = max(s, pr.get('running_pct', 0) + pr.get('idle_pct', 0) + pr.get('spinning_pct', 0)
                + pr.get('syscall_pct', 0))
        # The report rounds each share to 0.001: five of them add up to 0.0025 more at most.
        if s > 100.0025:
            bad.append('P%s: states add up to %.3f%%: %s' % (pr.get('p'), s, pr))
    ok(not bad, '%s: report: the shares of a P add up to <= 100%%' % label, sample(bad))
    m = rep.get('metrics', {})
    tot = m.get('running_pct', 0) + m.get('idle_pct', 0) + m.get('spinning_pct', 0)
    ok(tot <= 100.0 + 1e-9, '%s: report: running + idle + spinning <= 100%% of %d Ps' % (label, nps),
       'running %s idle %s spinning %s' % (m.get('running_pct'), m.get('idle_pct'),
                                           m.get('spinning_pct')))



def main(argv):
    if len(argv) != 4 or argv[2] not in CASES:
        print('usage: fidelity.py WSR CASE EXE; cases: ' + ' '.join(CASES))
        return 2
    wsr, case, exe = argv[1], argv[2], argv[3]
    if shutil.which('lttng') is None or shutil.which('babeltrace2') is None:
        print('Bail out! lttng-tools and babeltrace2 are needed (scripts/setup.sh installs them)')
        return 1
    procs = [int(x) for x in os.environ.get('WSR_FIDELITY_PROCS', '1,2,8').split(',')]
    tmp = tempfile.mkdtemp(prefix='wsr-fidelity-%s-' % case)
    seen, trans = set(), set()
    try:
        with test_run.Sessiond():
            for n in procs:
                lossless(wsr, tmp, case, exe, n, seen, trans)
            want = CASES[case][4].split()
            missing = [e for e in want if e not in seen]
            ok(not missing, '%s: the lossless runs produced %s' % (case, ' '.join(want)),
               'missing: ' + ' '.join(missing))
            missing = [t for t in CASES[case][5] if t not in trans]
            ok(not missing, '%s: the lossless runs made the transitions %s' % (
                case, ', '.join('%s %s->%s' % t for t in CASES[case][5])),
               'missing: %s\nseen: %s' % (missing, sorted(trans)))
            note('%s: events seen: %s' % (case, ' '.join(sorted(seen))))
            note('%s: transitions seen: %s' % (case, ', '.join('%s %s->%s' % t
                                                              for t in sorted(trans))))
            lossy(wsr, tmp, case, exe)
            if case == 'sched':
                check_case_table()
    finally:
        # A failing run keeps its traces and databases, to be read afterwards.
        if os.environ.get('WSR_KEEP_TRACES') or failed():
            note('traces kept in ' + tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return done()


def check_case_table():
    """The cases together ask for every catalog event."""
    names = set(catalog())
    asked = set()
    for c in CASES.values():
        asked.update(c[4].split())
    ok(names <= asked, 'the cases together require every catalog event',
       'not required by any case: ' + ' '.join(sorted(names - asked)))


if __name__ == '__main__':
    sys.exit(main(sys.argv))
