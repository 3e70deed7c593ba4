#!/usr/bin/env python3
# check-perfetto.py - decodes `wsr-view --perfetto` output with its own protobuf
# reader (no generated code, no library) and checks it against the database.
#
# Records a real trace of an example (wsr run --lossless), exports it, then
# checks the format's rules: every packet is a TracePacket on sequence 1; every
# TrackEvent names a declared track; per track, timestamps never go back,
# every SLICE_BEGIN is closed by a SLICE_END and slices do not overlap; every
# flow id has exactly one start (flow_ids) and one end (terminating_flow_ids),
# from the victim's P track to the thief's; and counts match the database: G
# slices per P, M state slices per M, steals, counter changes.
# usage: check-perfetto.py   (env: WSR_BUILD_ROOT; WSR_EXAMPLE, WSR_EXAMPLE_ARGS)
# Exit status: 0 all passed, 1 a check failed.
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'lib'))
import wsrdb  # noqa: E402

SLICE_BEGIN, SLICE_END, INSTANT, COUNTER = 1, 2, 3, 4
failures = 0
count = 0


def ok(cond, name, extra=None):
    global failures, count
    count += 1
    if cond:
        print('ok %d - %s' % (count, name))
    else:
        failures += 1
        print('not ok %d - %s%s' % (count, name, '' if extra is None else ': %r' % (extra,)))


def varint(buf, i):
    shift = v = 0
    while True:
        b = buf[i]
        i += 1
        v |= (b & 0x7f) << shift
        if b < 0x80:
            return v, i
        shift += 7


def fields(buf):
    """Yields (field, wire type, value) of one message; value is int or bytes."""
    i, n = 0, len(buf)
    while i < n:
        key, i = varint(buf, i)
        f, wt = key >> 3, key & 7
        if wt == 0:
            v, i = varint(buf, i)
        elif wt == 1:
            v = int.from_bytes(buf[i:i + 8], 'little')
            i += 8
        elif wt == 2:
            ln, i = varint(buf, i)
            v = bytes(buf[i:i + ln])
            i += ln
        elif wt == 5:
            v = int.from_bytes(buf[i:i + 4], 'little')
            i += 4
        else:
            raise ValueError('wire type %d at %d' % (wt, i))
        if i > n:
            raise ValueError('truncated message')
        yield f, wt, v


def signed(v):
    return v - (1 << 64) if v >= 1 << 63 else v


def decode(path):
    data = open(path, 'rb').read()
    tracks, events, seqs = {}, [], set()
    for f, wt, pkt in fields(data):
        if f != 1 or wt != 2:
            raise ValueError('top-level field %d is not Trace.packet' % f)
        ts = None
        te = td = None
        for pf, _, pv in fields(pkt):
            if pf == 8:
                ts = pv
            elif pf == 10:
                seqs.add(pv)
            elif pf == 11:
                te = pv
            elif pf == 60:
                td = pv
        if td is not None:
            d = {'counter': False, 'parent': 0}
            for tf, _, tv in fields(td):
                if tf == 1:
                    d['uuid'] = tv
                elif tf == 2:
                    d['name'] = tv.decode()
                elif tf == 5:
                    d['parent'] = tv
                elif tf == 8:
                    d['counter'] = True
            tracks[d['uuid']] = d
        if te is not None:
            e = {'ts': ts, 'flows': [], 'terms': [], 'name': None, 'value': None, 'track': 0}
            for ef, _, ev in fields(te):
                if ef == 9:
                    e['type'] = ev
                elif ef == 11:
                    e['track'] = ev
                elif ef == 23:
                    e['name'] = ev.decode()
                elif ef == 30:
                    e['value'] = signed(ev)
                elif ef == 47:
                    e['flows'].append(ev)
                elif ef == 48:
                    e['terms'].append(ev)
            events.append(e)
    return tracks, events, seqs


def main():
    build = os.environ['WSR_BUILD_ROOT']
    wsr = os.path.join(build, 'analyzer', 'wsr')
    view = os.path.join(build, 'viewer', 'wsr-view')
    example = os.environ.get('WSR_EXAMPLE', os.path.join(build, 'examples', 'skewed'))
    args = os.environ.get('WSR_EXAMPLE_ARGS', '20000 100').split()
    with tempfile.TemporaryDirectory(prefix='wsr-perfetto-') as work:
        trace = os.path.join(work, 'trace')
        r = subprocess.run([wsr, 'run', '--out', trace, '--lossless', '--', example] + args,
                           capture_output=True, text=True)
        db = os.path.join(trace, 'trace.db')
        if not os.path.exists(db):
            print('# wsr run left no trace.db (exit %d): %s' % (r.returncode, r.stderr.strip()))
            db = os.path.join(work, 'trace.db')
            subprocess.run([wsr, 'ingest', trace, '-o', db], check=True)
        out = os.path.join(work, 'trace.perfetto-trace')
        r = subprocess.run([view, '--perfetto', '-o', out, db], capture_output=True, text=True)
        ok(r.returncode == 0 and os.path.exists(out), 'wsr-view --perfetto writes the file',
           r.stderr)
        if r.returncode != 0:
            return
        print('# %s: %d bytes' % (out, os.path.getsize(out)))
        bad = os.path.join(work, 'bad.db')
        with open(bad, 'w') as f:
            f.write('not a database\n')
        r = subprocess.run([view, '--perfetto', '-o', bad + '.out', bad], capture_output=True,
                           text=True)
        ok(r.returncode == 2 and not os.path.exists(bad + '.out')
           and 'not a wsr database' in r.stderr,
           'a file that is not a wsr database: exit 2, clear error, no output', r.stderr)
        tracks, events, seqs = decode(out)
        c = wsrdb.connect(db, ro=True)

        ok(seqs == {1}, 'every packet is on sequence 1', seqs)
        ok(all(e['track'] in tracks for e in events), 'every event names a declared track')
        by_name = {t['name']: u for u, t in tracks.items()}

        # Per track: time order, balanced and non-overlapping slices.
        last, depth, slices, bad = {}, {}, {}, []
        for e in events:
            t = e['track']
            if e['ts'] is None or e['ts'] < last.get(t, 0):
                bad.append(('time goes back', tracks[t]['name'], e['ts']))
            last[t] = e['ts']
            if e['type'] == SLICE_BEGIN:
                if depth.get(t, 0) != 0:
                    bad.append(('overlapping slice', tracks[t]['name'], e['ts']))
                depth[t] = depth.get(t, 0) + 1
                slices[t] = slices.get(t, 0) + 1
            elif e['type'] == SLICE_END:
                depth[t] = depth.get(t, 0) - 1
                if depth[t] < 0:
                    bad.append(('end without begin', tracks[t]['name'], e['ts']))
        unclosed = [tracks[t]['name'] for t, d in depth.items() if d != 0]
        ok(not bad, 'per track, time never goes back and slices do not overlap', bad[:5])
        ok(not unclosed, 'every slice opens and closes on its track', unclosed)

        # Counts against the database.
        for (p, n) in c.execute("SELECT p, count(*) FROM g_state WHERE state = 'running' "
                                "AND p IS NOT NULL GROUP BY p"):
            got = slices.get(by_name.get('P%d' % p), 0)
            ok(got == n, 'P%d: %d G slices as in g_state' % (p, n), got)
        for (m, n) in c.execute('SELECT m, count(*) FROM m_state GROUP BY m'):
            got = slices.get(by_name.get('M%d' % m), 0)
            ok(got == n, 'M%d: %d state slices as in m_state' % (m, n), got)

        starts, ends = {}, {}
        for e in events:
            for fid in e['flows']:
                starts.setdefault(fid, []).append(e)
            for fid in e['terms']:
                ends.setdefault(fid, []).append(e)
        both = all(len(starts.get(f, [])) == 1 and len(ends.get(f, [])) == 1
                   for f in set(starts) | set(ends))
        ok(both, 'every flow has exactly one start and one end')
        nsteals = c.execute('SELECT count(*) FROM steals').fetchone()[0]
        ok(len(starts) == nsteals == len(ends), 'one flow per steal (%d)' % nsteals,
           (len(starts), len(ends)))
        wrong = 0
        for (rowid, ts, thief, victim) in c.execute('SELECT rowid, ts, thief, victim FROM steals'):
            s = starts.get(rowid + 1, [None])[0]
            t = ends.get(rowid + 1, [None])[0]
            if (s is None or t is None or s['ts'] != ts or t['ts'] != ts
                    or s['track'] != by_name.get('P%d' % victim)
                    or t['track'] != by_name.get('P%d' % thief)):
                wrong += 1
        ok(wrong == 0, 'each steal flows from the victim P track to the thief P track', wrong)

        for col in ('idle_ps', 'spinning_ms', 'runnable_gs', 'global_len'):
            n = c.execute('SELECT count(*) FROM (SELECT %s AS v, lag(%s) OVER (ORDER BY ts) AS w '
                          'FROM counters) WHERE w IS NULL OR v != w' % (col, col)).fetchone()[0]
            u = by_name.get(col)
            got = [e['value'] for e in events if e['track'] == u and e['type'] == COUNTER]
            ok(u is not None and tracks[u]['counter'] and len(got) == n,
               'counter track %s: %d changes as in counters' % (col, n), len(got))
            last_db = c.execute('SELECT %s FROM counters ORDER BY ts DESC LIMIT 1'
                                % col).fetchone()
            ok(not got or last_db is None or got[-1] == last_db[0],
               'counter track %s ends at the last value' % col)
    print('1..%d' % count)


if __name__ == '__main__':
    try:
        main()
    except Exception as ex:  # a decoding error is a failure, not a crash
        failures += 1
        print('not ok - %s: %s' % (type(ex).__name__, ex))
    sys.exit(1 if failures else 0)
