#!/usr/bin/env python3
# test_analyzer.py - integration tests of `wsr ingest/report/check/diff` on
# real LTTng traces (TAP output). One case per invocation:
#
#   test_analyzer.py WSR SIM sim
#       sim-emitter (exact counters): per-kind counts == its stats line,
#       events == babeltrace2's count, reconstructed schedtrace == its
#       schedtrace events in 100% of snapshots, interval tables tile time,
#       report/check/diff in every format.
#   test_analyzer.py WSR SIM example NAME EXE ARGS...
#       a libwsr example under WSRDEBUG=stats=1,schedtrace=2: counts ==
#       stats line, events == babeltrace2, gomaxprocs and threads exact,
#       the other schedtrace fields exact in >= 95% of snapshots and within 1
#       in the rest, tiling, report.
#   test_analyzer.py WSR SIM bad-input
#       every bad-input case: exit 2, its message, no database left behind.
#   test_analyzer.py WSR SIM gather SIM_STOCK
#       the same simulation through the gathering probes (one ring-buffer
#       write per event, tracepoints/wsr_tp_write.h) and through LTTng's stock
#       probes (SIM_STOCK, built with -DWSR_TP_NO_GATHER): babeltrace2 decodes
#       the same events with the same fields and values; the kinds compared
#       include a string, a sequence, both enums and every integer width.
#   test_analyzer.py WSR SIM plugin PLUGIN_DIR
#       babeltrace2 --plugin-path=PLUGIN_DIR -c sink.wsr.sqlite writes the
#       same database as `wsr ingest`.
#
# Invariants: every temporary file lives under one TemporaryDirectory;
#   no assertion depends on wall-clock time.
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import xml.dom.minidom

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lttrec  # noqa: E402

_n = [0]
_failed = [0]


def ok(cond, name, diag=''):
    _n[0] += 1
    if cond:
        print('ok %d - %s' % (_n[0], name))
    else:
        _failed[0] += 1
        print('not ok %d - %s' % (_n[0], name))
        for line in str(diag).splitlines()[:40]:
            print('#   ' + line)
    sys.stdout.flush()
    return cond


def run(argv, **kw):
    return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def bt2_event_count(trace):
    # sink.utils.counter prints running totals now and then, the final ones last.
    r = run(['babeltrace2', trace, '-c', 'sink.utils.counter'])
    n = None
    for line in r.stdout.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[1] == 'Event' and parts[2] == 'messages':
            n = int(parts[0])
    if r.returncode != 0 or n is None:
        raise RuntimeError('babeltrace2 counter output: ' + r.stdout + r.stderr)
    return n


def check_counts(db, stats, events_in_trace):
    counts = dict(db.execute('SELECT name, n FROM event_counts'))
    total = db.execute('SELECT count(*) FROM events').fetchone()[0]
    ok(total == events_in_trace, 'SELECT count(*) FROM events == babeltrace2 event count',
       '%d vs %d' % (total, events_in_trace))
    scanned = dict(db.execute('SELECT name, count(*) FROM events GROUP BY name'))
    ok(scanned == counts, 'event_counts table == GROUP BY over events', '%s\n%s' % (scanned, counts))
    extra = {'runqput_next', 'stolen', 'max_spinning'}
    bad = []
    for k, v in stats.items():
        if k in extra:
            continue
        if counts.get(k, 0) != v:
            bad.append('%s: db %d, runtime %d' % (k, counts.get(k, 0), v))
    ok(not bad, 'per-kind counts in the database == the runtime stats line', '\n'.join(bad))
    nxt = db.execute("SELECT count(*) FROM events WHERE name = 'runqput' AND a1 = 1").fetchone()[0]
    ok(nxt == stats.get('runqput_next', 0), 'runqput with next=1 == runqput_next',
       '%d vs %d' % (nxt, stats.get('runqput_next', 0)))
    stolen = db.execute('SELECT coalesce(sum(n), 0) FROM steals').fetchone()[0]
    ok(stolen == stats.get('stolen', 0), 'sum(steals.n) == stolen',
       '%d vs %d' % (stolen, stats.get('stolen', 0)))
    ok(db.execute('SELECT count(*) FROM steals').fetchone()[0] == counts.get('steal', 0),
       'steals table rows == steal events')


def check_m_tids(db):
    """Every M's tid is its own (a real runtime: one thread per M)."""
    # Every M's tid is its own: the vtid of every event it emits itself
    # (sysmon emits retake, handoff, preempt, schedtrace; a waker may emit a
    # woken M's spin_start), one tid per M, and M0's is the process's.
    wrong = db.execute(
        "SELECT e.m, m.tid, e.tid, e.name FROM events e JOIN m ON m.m = e.m WHERE e.m >= 0 AND "
        "e.name NOT IN ('retake', 'handoff', 'preempt', 'schedtrace', 'spin_start') AND "
        "e.tid IS NOT m.tid LIMIT 5").fetchall()
    ok(not wrong, 'm.tid is the thread of every event the M emits itself', wrong)
    dup = db.execute('SELECT tid, count(*) FROM m GROUP BY tid HAVING count(*) > 1').fetchall()
    ok(not dup, 'one tid per M', dup)
    m0 = db.execute('SELECT tid, (SELECT vpid FROM events LIMIT 1) FROM m WHERE m = 0').fetchone()
    ok(m0 is None or m0[0] == m0[1], "M0's tid is the process id", m0)
    early = db.execute('SELECT m.m, m.created_ts, min(s.start_ts) FROM m JOIN m_state s USING (m) '
                       'GROUP BY m.m HAVING min(s.start_ts) < m.created_ts').fetchall()
    ok(not early, 'no M has an interval before it was created', early)


def check_sched_labels(db, stderr, ctx):
    """The live "SCHED Nms" lines and the trace's schedtrace events name the
    same instants: N is whole ms from the runtime's start (taken just before
    its init event) to the snapshot's first read (read_ts[0])."""
    live = [int(x) for x in re.findall(r'^SCHED (\d+)ms:', stderr, re.M)]
    init = db.execute("SELECT min(ts) FROM events WHERE name = 'init'").fetchone()[0]
    ev = [json.loads(x)['read_ts'][0] - init for (x,) in db.execute(
        "SELECT extra FROM events WHERE name = 'schedtrace' ORDER BY ts")]
    ok(len(live) == len(ev) and len(ev) > 0, '%s: one live SCHED line per schedtrace event'
       % ctx, (len(live), len(ev)))
    # N = floor((read_ts[0] - start) / 1 ms), and the runtime's start precedes
    # init's own clock read by the time of one tracepoint call (< 50 us).
    off = [(n, t) for n, t in zip(live, ev) if not -50000 <= t - n * 1000000 < 1000000]
    ok(not off, '%s: each SCHED label is the ms of its snapshot since init' % ctx, off[:5])


def check_tiling(db):
    end = db.execute("SELECT value FROM meta WHERE key = 'end_ts'").fetchone()[0]
    for table, key in (('p_state', 'p'), ('m_state', 'm')):
        gaps = db.execute(
            'SELECT %s, start_ts, prev FROM (SELECT %s, start_ts, lag(end_ts) OVER '
            '(PARTITION BY %s ORDER BY start_ts) AS prev FROM %s) WHERE prev IS NOT NULL AND '
            'prev != start_ts LIMIT 5' % (key, key, key, table)).fetchall()
        ok(not gaps, '%s: per %s the intervals follow each other without gap or overlap'
           % (table, key.upper()), gaps)
        empty = db.execute('SELECT count(*) FROM %s WHERE end_ts <= start_ts' % table).fetchone()[0]
        ok(empty == 0, '%s: no empty or reversed interval' % table, empty)
        short = db.execute('SELECT %s, max(end_ts) FROM %s GROUP BY %s HAVING max(end_ts) != ?'
                           % (key, table, key), (end,)).fetchall()
        ok(not short, '%s: every %s is covered up to the end of the trace' % (table, key.upper()),
           short)
    p_start = db.execute('SELECT p, min(start_ts) FROM p_state GROUP BY p').fetchall()
    init = db.execute("SELECT min(ts) FROM events WHERE name = 'init'").fetchone()[0]
    if init is not None:
        late = [r for r in p_start if r[1] != init]
        ok(not late, 'p_state: every P is covered from init on', late)
    gaps = db.execute(
        'SELECT g, start_ts, prev FROM (SELECT g, start_ts, lag(end_ts) OVER (PARTITION BY g '
        'ORDER BY start_ts, rowid) AS prev FROM g_state) WHERE prev IS NOT NULL AND '
        'prev != start_ts LIMIT 5').fetchall()
    ok(not gaps, 'g_state: per G the intervals follow each other without gap or overlap', gaps)
    rev = db.execute('SELECT count(*) FROM g_state WHERE end_ts < start_ts').fetchone()[0]
    ok(rev == 0, 'g_state: no reversed interval', rev)
    ends = db.execute(
        'SELECT g.g FROM g JOIN (SELECT g, min(start_ts) AS s, max(end_ts) AS e FROM g_state '
        'GROUP BY g) x ON x.g = g.g WHERE x.s != g.created_ts OR x.e != coalesce(g.end_ts, ?) '
        'LIMIT 5', (end,)).fetchall()
    ok(not ends, 'g_state: per G the intervals cover created_ts .. end_ts (or trace end)', ends)
    bad = db.execute(
        "SELECT g, prev, state FROM (SELECT g, state, lag(state) OVER (PARTITION BY g ORDER BY "
        "start_ts, rowid) AS prev FROM g_state) WHERE (state = 'running' AND prev IN "
        "('running', 'waiting')) OR (state = prev AND state != 'runnable') LIMIT 5").fetchall()
    ok(not bad, 'g_state: runnable -> running -> ... is well ordered per G', bad)
    neg = db.execute('SELECT count(*) FROM counters WHERE idle_ps < 0 OR spinning_ms < 0 OR '
                     'running_gs < 0 OR runnable_gs < 0 OR global_len < 0').fetchone()[0]
    ok(neg == 0, 'counters never go negative', neg)
    gmp = db.execute("SELECT value FROM meta WHERE key = 'gomaxprocs'").fetchone()[0]
    over = db.execute('SELECT count(*) FROM counters WHERE running_gs > ? OR idle_ps > ?',
                      (gmp, gmp)).fetchone()[0]
    ok(over == 0, 'at most gomaxprocs Gs run and Ps idle at once', over)


def check_schedtrace(db, ctx, exact=False):
    """Compares the runtime's schedtrace snapshots with the reconstruction.

    `wsr ingest` reconstructs every field of every snapshot at the time the
    runtime read it (schedtrace.read_ts) into schedtrace_fields; a field that
    differs must be explained by events that raced with the read, named in
    `racing` (analyzer/schedcheck.c has the rule). No difference is
    tolerated unexplained. exact: the emitter is deterministic (the
    sim-emitter), so every field must agree with no racing event at all.
    """
    n_snap = db.execute("SELECT count(*) FROM events WHERE name = 'schedtrace'").fetchone()[0]
    ok(n_snap > 0, '%s: the trace has schedtrace events to compare with' % ctx, n_snap)
    if not n_snap:
        return
    gmp = db.execute("SELECT value FROM meta WHERE key = 'gomaxprocs'").fetchone()[0]
    per_snap = db.execute('SELECT count(*) FROM schedtrace_fields GROUP BY snap_id').fetchall()
    ok(len(per_snap) == n_snap and all(c == 5 + 2 * gmp for (c,) in per_snap),
       '%s: each of %d snapshots has its %d fields checked' % (ctx, n_snap, 5 + 2 * gmp),
       per_snap[:5])
    # The runtime's values in schedtrace_fields are the event's.
    snaps = {}
    for sid, extra in db.execute("SELECT id, extra FROM events WHERE name = 'schedtrace'"):
        snaps[sid] = json.loads(extra)
    mism = []
    for sid, field, p, rt in db.execute('SELECT snap_id, field, p, rt FROM schedtrace_fields'):
        v = snaps[sid][field][p] if p is not None else snaps[sid][field]
        if v != rt:
            mism.append((sid, field, p, rt, v))
    ok(not mism, '%s: schedtrace_fields holds the runtime\'s values' % ctx, mism)
    for field, n, same, expl in db.execute(
            'SELECT field, count(*), sum(rt = recon), sum(explained) FROM schedtrace_fields '
            'GROUP BY field ORDER BY field'):
        print('# %s: %s equal in %d of %d reads, the other %d explained by racing events'
              % (ctx, field, same, n, expl - same))
    bad = db.execute('SELECT snap_ts, field, p, rt, recon, read_b, read_e FROM schedtrace_fields '
                     'WHERE explained = 0 LIMIT 10').fetchall()
    ok(not bad, '%s: every field of every snapshot agrees or is explained' % ctx, bad)
    # Each racing event exists and is of a kind that changes what was read.
    kinds = db.execute('SELECT DISTINCT e.name FROM schedtrace_fields f, json_each(f.racing) j '
                       'JOIN events e ON e.id = j.value').fetchall()
    allowed = {'runqput', 'runq_spill', 'steal', 'globrunq_get', 'globrunq_put', 'g_run',
               'p_idle', 'p_busy', 'spin_start', 'spin_stop', 'm_park', 'm_unpark',
               'm_create', 'init'}
    ok({k for (k,) in kinds} <= allowed, '%s: racing events are queue or count changes' % ctx,
       kinds)
    unexplained = db.execute("SELECT value FROM meta WHERE key = 'schedtrace_unexplained'"
                             ).fetchone()
    ok(unexplained is not None and unexplained[0] == 0,
       '%s: meta.schedtrace_unexplained is 0' % ctx, unexplained)
    if exact:
        racing = db.execute('SELECT count(*) FROM schedtrace_fields WHERE rt != recon'
                            ).fetchone()[0]
        ok(racing == 0, '%s: every field equal (a deterministic emitter)' % ctx, racing)


def check_report(wsr, dbpath, tmp):
    r = run([wsr, 'report', dbpath])
    ok(r.returncode == 0 and 'SCHED ' in r.stdout and 'steal matrix' in r.stdout,
       'wsr report (text)', r.stderr + r.stdout[-2000:])
    db = sqlite3.connect(dbpath)
    view = db.execute('SELECT t_ms, gomaxprocs, idleprocs, threads, spinningthreads, '
                      'needspinning, idlethreads, runqueue, runq, schedticks FROM '
                      'schedtrace').fetchall()
    lines = []
    for t, g, i, th, sp, ns, it, rq, runq, ticks in view:
        q = json.loads(runq)
        lines.append('SCHED %dms: gomaxprocs=%d idleprocs=%d threads=%d spinningthreads=%d '
                     'needspinning=%d idlethreads=%d runqueue=%d [ %s ] schedticks=[ %s]'
                     % (t, g, i, th, sp, ns, it, rq, ' '.join(map(str, q)),
                        ''.join('%d ' % x for x in json.loads(ticks))))
    got = [l for l in r.stdout.splitlines() if l.startswith('SCHED ')]
    ok(got == lines and len(lines) > 0,
       'report schedtrace lines == the schedtrace view in Go format (%d lines)' % len(lines),
       '\n'.join(got[:3] + ['--'] + lines[:3]))
    r = run([wsr, 'report', dbpath, '--detail', '--interval', '1ms'])
    ok(r.returncode == 0 and '  P0: status=' in r.stdout and '  M0: p=' in r.stdout,
       'wsr report --detail has P and M lines', r.stderr + r.stdout[-1000:])
    r = run([wsr, 'report', dbpath, '--format', 'json'])
    try:
        j = json.loads(r.stdout)
        good = r.returncode == 0 and 'metrics' in j and len(j['procs']) == j['gomaxprocs']
    except ValueError as e:
        good, j = False, str(e)
    ok(good, 'wsr report --format json is valid JSON with metrics and procs', r.stderr)
    r = run([wsr, 'report', dbpath, '--format', 'junit'])
    try:
        x = xml.dom.minidom.parseString(r.stdout)
        good = r.returncode == 0 and len(x.getElementsByTagName('testcase')) > 0
    except Exception as e:  # noqa: BLE001
        good = False
        r.stderr += str(e)
    ok(good, 'wsr report --format junit is valid XML with testcases', r.stderr)
    r = run([wsr, 'report', dbpath, '--format', 'md'])
    ok(r.returncode == 0 and r.stdout.startswith('## wsr report') and '| P0 |' in r.stdout,
       'wsr report --format md', r.stderr)
    r = run([wsr, 'report', dbpath, '--steal-graph', 'dot'])
    ok(r.returncode == 0 and 'digraph steals' in r.stdout, 'wsr report --steal-graph dot',
       r.stderr)
    r = run([wsr, 'report', dbpath, '--format', 'bogus'])
    ok(r.returncode == 2, 'wsr report --format bogus exits 2', r.returncode)
    r = run([wsr, 'report', dbpath, '--interval', 'soon'])
    ok(r.returncode == 2, 'wsr report --interval soon exits 2', r.returncode)
    # check: a condition that holds, one that is breached, a bad expression.
    steals = db.execute('SELECT count(*) FROM steals').fetchone()[0]
    r = run([wsr, 'check', dbpath, '--fail-if', 'steals > %d' % steals, '--fail-if',
             'discarded > 0'])
    ok(r.returncode == 0 and r.stdout.count('ok: ') == 2, 'wsr check passes (exit 0)',
       r.stdout + r.stderr)
    r = run([wsr, 'check', dbpath, '--fail-if', 'steals >= %d' % steals, '--fail-if',
             'events < 1', '--fail-if', 'gomaxprocs != 0'])
    fails = [l for l in r.stdout.splitlines() if l.startswith('FAIL: ')]
    ok(r.returncode == 1 and len(fails) == 2 and 'steals >= %d' % steals in fails[0],
       'wsr check exits 1 with one line per breach', r.stdout + r.stderr)
    for expr in ('steals >> 1', 'nosuchmetric > 1', 'steals > x', '> 3'):
        r = run([wsr, 'check', dbpath, '--fail-if', expr])
        ok(r.returncode == 2 and 'error' in r.stderr, 'wsr check --fail-if %r exits 2' % expr,
           r.stdout + r.stderr)
    r = run([wsr, 'diff', dbpath, dbpath])
    ok(r.returncode == 0 and 'steals' in r.stdout and '+0' in r.stdout, 'wsr diff (text)',
       r.stderr)
    r = run([wsr, 'diff', dbpath, dbpath, '--format', 'json'])
    try:
        j = json.loads(r.stdout)
        good = all(v['delta'] == 0 for v in j['metrics'].values())
    except ValueError:
        good = False
    ok(r.returncode == 0 and good, 'wsr diff --format json: zero deltas against itself', r.stderr)
    db.close()


def ingest(wsr, trace, out, *extra):
    return run([wsr, 'ingest', trace, '-o', out, '--quiet'] + list(extra))


def case_sim(wsr, sim, tmp):
    trace = os.path.join(tmp, 'trace')
    rc, _, err = lttrec.record(trace, [sim, '-p', '4', '-g', '20000', '-w', '3', '-t', '10'])
    ok(rc == 0, 'sim-emitter ran', err[-500:])
    stats = lttrec.stats_line(err)
    dbpath = os.path.join(tmp, 'sim.db')
    r = ingest(wsr, trace, dbpath)
    if not ok(r.returncode == 0 and os.path.exists(dbpath), 'wsr ingest of the sim trace',
              r.stderr):
        return
    ok(not os.path.exists(dbpath + '.tmp'), 'no .tmp left after a successful ingest')
    db = sqlite3.connect(dbpath)
    ok(db.execute('PRAGMA user_version').fetchone()[0] == 3, 'PRAGMA user_version is 3')
    disc = db.execute("SELECT value FROM meta WHERE key = 'discarded_events'").fetchone()[0]
    ok(disc == 0, 'the recording lost no event', disc)
    check_counts(db, stats, bt2_event_count(trace))
    check_tiling(db)
    check_schedtrace(db, 'sim', exact=True)
    spills = db.execute('SELECT count(*) FROM spills').fetchone()[0]
    ok(spills == stats['runq_spill'], 'spills table rows == runq_spill', spills)
    # vtid and vpid are payload fields (no context fields in this recording).
    ids = db.execute('SELECT count(*), count(tid), count(DISTINCT vpid), min(tid) > 0, '
                     "(SELECT value FROM meta WHERE key = 'vpid') FROM events").fetchone()
    ok(ids[0] == ids[1] and ids[2] == 1 and ids[3] == 1 and ids[4] not in (None, ''),
       'every event has its tid and the one vpid, and meta names it', ids)
    db.close()
    check_report(wsr, dbpath, tmp)
    # The same trace ingested twice gives the same database content.
    db2 = os.path.join(tmp, 'sim2.db')
    ingest(wsr, trace, db2)
    a, b = sqlite3.connect(dbpath), sqlite3.connect(db2)
    same = True
    for t in ('events', 'g_state', 'p_state', 'm_state', 'counters', 'p_counters', 'steals', 'g'):
        q = 'SELECT * FROM %s' % t
        same = same and (sorted(a.execute(q).fetchall(), key=repr) ==
                         sorted(b.execute(q).fetchall(), key=repr))
    ok(same, 'ingestion is deterministic (same trace, same rows)')
    # --force semantics.
    before = os.stat(dbpath).st_mtime_ns
    r = ingest(wsr, trace, dbpath)
    ok(r.returncode == 2 and '--force' in r.stderr and os.stat(dbpath).st_mtime_ns == before,
       'an existing database is not overwritten without --force (exit 2)', r.stderr)
    r = ingest(wsr, trace, dbpath, '--force')
    ok(r.returncode == 0, 'wsr ingest --force replaces it', r.stderr)
    r = run([wsr, 'ingest', '--help'])
    ok(r.returncode == 0 and 'usage' in r.stdout, 'wsr ingest --help exits 0')


def case_example(wsr, name, exe, args, tmp):
    trace = os.path.join(tmp, 'trace')
    rc, _, err = lttrec.record(trace, [exe] + args,
                               env={'WSRDEBUG': 'stats=1,schedtrace=2'})
    ok(rc == 0, '%s ran' % name, err[-500:])
    stats = lttrec.stats_line(err)
    dbpath = os.path.join(tmp, name + '.db')
    r = ingest(wsr, trace, dbpath)
    if not ok(r.returncode == 0, 'wsr ingest of the %s trace' % name, r.stderr):
        return
    db = sqlite3.connect(dbpath)
    disc = db.execute("SELECT value FROM meta WHERE key = 'discarded_events'").fetchone()[0]
    ok(disc == 0, 'the recording lost no event', disc)
    check_counts(db, stats, bt2_event_count(trace))
    check_tiling(db)
    check_m_tids(db)
    check_schedtrace(db, name)
    check_sched_labels(db, err, name)
    db.close()
    r = run([wsr, 'report', dbpath])
    ok(r.returncode == 0 and 'SCHED ' in r.stdout, 'wsr report on %s' % name, r.stderr)


def expect_bad(wsr, trace, out, what, needles, timeout_args=()):
    r = run([wsr, 'ingest', trace, '-o', out, '--quiet'] + list(timeout_args))
    msg = r.stderr.strip()
    good = (r.returncode == 2 and msg.startswith('wsr ingest: error: ')
            and any(n in msg for n in needles))
    ok(good, '%s: exit 2 with "%s"' % (what, ' / '.join(needles)),
       'exit %d: %s' % (r.returncode, msg[:1500]))
    ok(not os.path.exists(out) and not os.path.exists(out + '.tmp'),
       '%s: no database left behind' % what)


def copy_trace(src, dst):
    shutil.copytree(src, dst)
    streams, meta = [], None
    for root, _, files in os.walk(dst):
        for f in files:
            p = os.path.join(root, f)
            if f == 'metadata':
                meta = p
            elif not f.endswith('.idx') and os.path.getsize(p) > 0:
                streams.append(p)
    streams.sort(key=os.path.getsize, reverse=True)
    return meta, streams


def case_bad_input(wsr, sim, tmp):
    out = os.path.join(tmp, 'out.db')
    expect_bad(wsr, os.path.join(tmp, 'nonexistent'), out, 'missing directory',
               ['No such file or directory'])
    f = os.path.join(tmp, 'file')
    open(f, 'w').write('not a trace\n')
    expect_bad(wsr, f, out, 'a file', ['not a directory'])
    empty = os.path.join(tmp, 'empty')
    os.mkdir(empty)
    expect_bad(wsr, empty, out, 'empty directory', ['empty directory'])
    junk = os.path.join(tmp, 'junk')
    os.mkdir(junk)
    open(os.path.join(junk, 'notes.txt'), 'w').write('hello\n')
    expect_bad(wsr, junk, out, 'directory without CTF metadata', ['not a CTF trace'])

    good = os.path.join(tmp, 'good')
    rc, _, err = lttrec.record(good, [sim, '-p', '2', '-g', '3000', '-t', '20'])
    ok(rc == 0, 'sim-emitter ran', err[-300:])

    # No event at all: a session that recorded nothing.
    silent = os.path.join(tmp, 'silent')
    lttrec.record(silent, ['true'])
    expect_bad(wsr, silent, out, 'trace with no events',
               ['no stream data', 'holds no events', 'not a CTF trace', 'empty directory'])

    # Events, but none of the wsr provider (the libc wrapper's malloc events).
    wrapper = None
    for d in ('/usr/lib/x86_64-linux-gnu', '/usr/lib/aarch64-linux-gnu', '/usr/lib'):
        p = os.path.join(d, 'liblttng-ust-libc-wrapper.so.1')
        if os.path.exists(p):
            wrapper = p
    if wrapper:
        other = os.path.join(tmp, 'other')
        lttrec.record(other, ['sh', '-c', 'echo hi > /dev/null'], env={'LD_PRELOAD': wrapper},
                      events='lttng_ust_libc:*')
        expect_bad(wsr, other, out, 'trace without wsr events', ['no wsr events'])
    else:
        ok(True, '# SKIP liblttng-ust-libc-wrapper not installed')

    meta, streams = copy_trace(good, os.path.join(tmp, 'trunc-stream'))
    size = os.path.getsize(streams[0])
    with open(streams[0], 'r+b') as fh:
        fh.truncate(size - 1000)
    expect_bad(wsr, os.path.join(tmp, 'trunc-stream'), out, 'truncated stream file',
               ['stream file is truncated'])

    # More cut points: inside the first packet header, mid-file, one byte short.
    for cut in (20, size // 2, size - 1):
        d = os.path.join(tmp, 'trunc-stream-%d' % cut)
        meta, streams = copy_trace(good, d)
        with open(streams[0], 'r+b') as fh:
            fh.truncate(cut)
        expect_bad(wsr, d, out, 'stream file truncated at byte %d' % cut,
                   ['stream file is truncated', 'truncated'])
    # A trace whose metadata file is gone (stream files only).
    d = os.path.join(tmp, 'no-meta')
    meta, streams = copy_trace(good, d)
    os.unlink(meta)
    expect_bad(wsr, d, out, 'missing metadata file', ['not a CTF trace', 'metadata'])
    meta, streams = copy_trace(good, os.path.join(tmp, 'trunc-meta'))
    with open(meta, 'r+b') as fh:
        fh.truncate(os.path.getsize(meta) - 100)
    expect_bad(wsr, os.path.join(tmp, 'trunc-meta'), out, 'truncated metadata (mid-packet)',
               ['metadata is truncated'])

    meta, streams = copy_trace(good, os.path.join(tmp, 'trunc-meta2'))
    with open(meta, 'r+b') as fh:
        fh.truncate(4096)
    expect_bad(wsr, os.path.join(tmp, 'trunc-meta2'), out,
               'truncated metadata (at a packet boundary)', ['metadata is truncated',
                                                            'metadata text ends inside'])

    meta, streams = copy_trace(good, os.path.join(tmp, 'bad-meta'))
    with open(meta, 'r+b') as fh:
        data = bytearray(fh.read())
        i = data.find(b'event {')
        data[i:i + 7] = b'evXnt {'
        fh.seek(0)
        fh.write(data)
    expect_bad(wsr, os.path.join(tmp, 'bad-meta'), out, 'corrupted metadata',
               ['cannot decode the trace'])

    meta, streams = copy_trace(good, os.path.join(tmp, 'bad-magic'))
    with open(streams[0], 'r+b') as fh:
        fh.write(b'\xde\xad\xbe\xef')
    expect_bad(wsr, os.path.join(tmp, 'bad-magic'), out, 'corrupted packet header',
               ['bad packet magic'])

    meta, streams = copy_trace(good, os.path.join(tmp, 'bad-payload'))
    with open(streams[0], 'r+b') as fh:
        fh.seek(200)
        fh.write(b'\xff' * 600)
    expect_bad(wsr, os.path.join(tmp, 'bad-payload'), out, 'random bytes in event payloads',
               ['corrupted', 'cannot decode', 'out of range', 'crashed', 'no progress'])


def case_discarded(wsr, sim, tmp):
    """A trace with discarded events (tiny sub-buffers in discard mode): it
    ingests, and the database records the loss in meta and in `discarded`."""
    lossy = os.path.join(tmp, 'lossy')
    rc, _, err = lttrec.record(lossy, [sim, '-p', '2', '-g', '20000', '-t', '5'],
                               subbuf='4k', nsubbuf='2')
    ok(rc == 0, 'sim-emitter ran into 2 x 4 KiB sub-buffers', err[-300:])
    dbpath = os.path.join(tmp, 'lossy.db')
    r = ingest(wsr, lossy, dbpath)
    ok(r.returncode == 0, 'a trace with discarded events ingests', r.stderr[-500:])
    if r.returncode != 0:
        return
    db = sqlite3.connect(dbpath)
    n = db.execute("SELECT value FROM meta WHERE key = 'discarded_events'").fetchone()[0]
    rows = db.execute('SELECT count(*) FROM discarded').fetchone()[0]
    db.close()
    ok(int(n) > 0 and rows > 0, 'the database records the loss (meta.discarded_events = %s, '
       '%d rows in discarded)' % (n, rows))
    r = run([wsr, 'report', dbpath])
    ok(r.returncode == 0 and 'discard' in r.stdout.lower() and
       'every figure above is approximate' in r.stdout,
       'the report states the loss (and its work and span section too)', r.stdout[:800])


def decoded_events(trace):
    """babeltrace2's text lines of TRACE without the parts that differ between
    two recordings of the same deterministic run: time, delta, host, CPU, ids."""
    r = run(['babeltrace2', trace])
    if r.returncode != 0:
        raise RuntimeError('babeltrace2 failed: ' + r.stderr[-500:])
    out = []
    vpids, ok_ids = set(), True
    for line in r.stdout.splitlines():
        line = re.sub(r'^\[[^]]*\] \([^)]*\) \S+ ', '', line)
        line = re.sub(r'\{ cpu_id = \d+ \}, ', '', line)
        # The two programs are two processes: their ids differ, nothing else may.
        ids = re.search(r'vtid = (\d+), vpid = (\d+)', line)
        if ids is not None:
            vpids.add(int(ids.group(2)))
            ok_ids = ok_ids and int(ids.group(1)) > 0
            # init comes from the main thread, whose tid is the pid.
            if line.startswith('wsr:init:'):
                ok_ids = ok_ids and ids.group(1) == ids.group(2)
        line = re.sub(r'vtid = \d+, vpid = \d+', 'vtid = T, vpid = P', line)
        # schedtrace's read times are clock readings of each run: their
        # count must agree, not their values.
        line = re.sub(r'read_ts = \[.*\] \}$',
                      lambda m: re.sub(r'\] = \d+', '] = R', m.group(0)), line)
        out.append(line)
    ok(ok_ids and len(vpids) == 1 and min(vpids) > 0,
       '%s: every event carries a vtid and the one vpid, init the main thread\'s'
       % os.path.basename(trace),
       'vpids: %s' % sorted(vpids))
    return out


def case_gather(wsr, sim, sim_stock, tmp):
    argv = ['-p', '4', '-g', '20000', '-w', '3', '-t', '10']
    runs = []
    for exe in (sim, sim_stock):
        trace = os.path.join(tmp, os.path.basename(exe))
        rc, _, err = lttrec.record(trace, [exe] + argv)
        ok(rc == 0, '%s ran' % os.path.basename(exe), err[-500:])
        runs.append(decoded_events(trace))
    a, b = runs
    kinds = sorted({line.split(':')[1] for line in a if line.startswith('wsr:')})
    ok(len(a) > 1000 and len(a) == len(b), 'same number of events (%d, %d)' % (len(a), len(b)))
    first = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), None)
    ok(first is None, 'every event decodes to the same fields and values',
       '' if first is None else 'event %d:\n  gathered: %s\n  stock:    %s' %
       (first, a[first], b[first]))
    want = {'init', 'g_create', 'runqput', 'g_run', 'g_stop', 'g_ready',
            'globrunq_put', 'globrunq_get', 'steal', 'spin_start', 'spin_stop', 'p_idle',
            'p_busy', 'm_park', 'm_unpark', 'schedtrace'}
    ok(want <= set(kinds), 'the comparison covers strings, sequences, enums and every '
       'integer width', 'kinds seen: %s; missing: %s' % (kinds, sorted(want - set(kinds))))


def bt2_plugin_env():
    """The environment for a babeltrace2 that loads our (maybe sanitized) plugin."""
    env = dict(os.environ)
    if env.get('WSR_SAN_PRELOAD'):
        env['LD_PRELOAD'] = env['WSR_SAN_PRELOAD']
        # babeltrace2 and GLib are not instrumented: their allocations at exit
        # are not ours to report.
        env['ASAN_OPTIONS'] = (env.get('ASAN_OPTIONS', '') + ' detect_leaks=0').strip()
    return env


def case_plugin(wsr, sim, plugin_dir, tmp):
    trace = os.path.join(tmp, 'trace')
    # With LTTng's vpid/vtid contexts as well as the payload fields, as an
    # older recipe records: both readers must give the same rows.
    rc, _, err = lttrec.record(trace, [sim, '-p', '2', '-g', '3000', '-t', '20'],
                               contexts=True)
    ok(rc == 0, 'sim-emitter ran', err[-300:])
    a = os.path.join(tmp, 'ingest.db')
    b = os.path.join(tmp, 'plugin.db')
    r = ingest(wsr, trace, a)
    ok(r.returncode == 0, 'wsr ingest', r.stderr)
    r = run(['babeltrace2', '--plugin-path=' + plugin_dir, trace, '-c', 'sink.wsr.sqlite',
             '-p', 'path="%s"' % b], env=bt2_plugin_env())
    if not ok(r.returncode == 0 and os.path.exists(b), 'babeltrace2 -c sink.wsr.sqlite',
              r.stdout + r.stderr):
        return
    x, y = sqlite3.connect(a), sqlite3.connect(b)
    for t in ('events', 'g_state', 'p_state', 'm_state', 'counters', 'p_counters', 'steals',
              'event_counts'):
        q = 'SELECT * FROM %s' % t
        ok(sorted(x.execute(q).fetchall(), key=repr) == sorted(y.execute(q).fetchall(), key=repr),
           'sink.wsr.sqlite and wsr ingest agree on %s' % t)
    r = run(['babeltrace2', '--plugin-path=' + plugin_dir, trace, '-c', 'sink.wsr.sqlite',
             '-p', 'path="%s"' % b], env=bt2_plugin_env())
    ok(r.returncode != 0 and os.path.getsize(b) > 0,
       'sink.wsr.sqlite does not overwrite an existing database', r.stderr[-300:])


def main():
    wsr, sim, case = sys.argv[1], sys.argv[2], sys.argv[3]
    with tempfile.TemporaryDirectory(prefix='wsr-analyzer-') as tmp:
        if case == 'sim':
            case_sim(wsr, sim, tmp)
        elif case == 'example':
            case_example(wsr, sys.argv[4], sys.argv[5], sys.argv[6:], tmp)
        elif case == 'bad-input':
            case_bad_input(wsr, sim, tmp)
            case_discarded(wsr, sim, tmp)
        elif case == 'gather':
            case_gather(wsr, sim, sys.argv[4], tmp)
        elif case == 'plugin':
            why = os.environ.get('WSR_SAN_NO_PLUGIN')
            if why:
                print('1..0 # SKIP ' + why)
                return 0
            case_plugin(wsr, sim, sys.argv[4], tmp)
        else:
            print('Bail out! unknown case ' + case)
            return 2
    print('1..%d' % _n[0])
    return 1 if _failed[0] else 0


if __name__ == '__main__':
    sys.exit(main())
