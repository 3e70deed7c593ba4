#!/usr/bin/env python3
# check-server.py - the viewer's HTTP server and SQL console under attack and
# load (TAP). Records a real trace of an example (wsr run --lossless), then:
#
#   console: only known-safe SQL functions run. fts3_tokenizer() in its
#     one-argument form (which returned a libsqlite3 address) and two-argument
#     form (which overwrote the tokenizer pointer, so that a later MATCH on an
#     FTS4 table crashed wsr-view) get a clean error, the MATCH too, and the
#     server stays up and exits 0; load_extension, PRAGMA, ATTACH and writes
#     are refused; the schedtrace view (json_group_array) still works.
#   load: with 200 slow console queries in flight (each runs into the 2 s
#     limit; the queue and workers take 10, the rest get 503 at once) and 100
#     idle or half-sent connections open (more than the old limit of 64), the
#     timeline, counters, info and steals answer, and the same as before the
#     load, while console queries are still running and the idle connections
#     still open; the idle connections are closed by the server's idle
#     timeout (before: 60 s), and the console answers again afterwards.
#   cross-site: the printed URL carries a per-run token (#token=...); /api/
#     (the console included) needs it in X-WSR-Token: none, a wrong one or
#     two are refused; an Origin other than the server, a Sec-Fetch-Site of
#     cross-site or same-site are refused; a second Host header is refused
#     even when the right one comes first; localhost:PORT is accepted as well
#     as 127.0.0.1:PORT (and its own Origin with it).
#
# usage: check-server.py   (env: WSR_BUILD_ROOT; WSR_EXAMPLE, WSR_EXAMPLE_ARGS)
# Invariants: loopback only; every wait is bounded; no wall-clock assertion;
#   everything lives in one temporary directory; servers are stopped by pid.
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import wsrview  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'lib'))
import wsrdb  # noqa: E402

failures = 0
count = 0


def ok(cond, name, extra=None):
    global failures, count
    count += 1
    if cond:
        print('ok %d - %s' % (count, name))
    else:
        failures += 1
        print('not ok %d - %s' % (count, name))
        for line in repr(extra).splitlines()[:20]:
            print('#   ' + line[:2000])
    sys.stdout.flush()
    return cond


def sql(v, q, **kw):
    """The console's answer to q: (status, JSON) or (None, the exception)."""
    try:
        return v.json('/api/sql?q=' + urllib.parse.quote(q), **kw)
    except Exception as e:  # noqa: BLE001 - a dead server is what we look for
        return None, e


def refused(answer, needle='not authorized'):
    status, j = answer
    return status == 200 and isinstance(j, dict) and 'rows' not in j and needle in j.get('error', '')


def case_console(wsr, db, tmp):
    fts = os.path.join(tmp, 'fts.db')
    shutil.copyfile(db, fts)
    c = wsrdb.connect(fts)
    c.execute('CREATE VIRTUAL TABLE notes USING fts4(body)')
    c.execute("INSERT INTO notes VALUES ('a note about steals')")
    c.commit()
    c.close()
    v = wsrview.View(wsr, fts)
    try:
        a1 = sql(v, "SELECT hex(fts3_tokenizer('simple'))")
        ok(refused(a1), 'fts3_tokenizer(name) is refused (no libsqlite3 address)', a1)
        a2 = sql(v, "SELECT fts3_tokenizer('simple', x'4141414141414141')")
        ok(refused(a2), 'fts3_tokenizer(name, pointer) is refused', a2)
        a3 = sql(v, "SELECT * FROM notes WHERE notes MATCH 'note'")
        ok(a3[0] == 200 and isinstance(a3[1], dict) and ('error' in a3[1] or 'rows' in a3[1]),
           'a MATCH on an FTS4 table after them gets an answer (no crash)', a3)
        alive = v.json('/api/status') if v.proc.poll() is None else (None, None)
        ok(alive[0] == 200 and v.proc.poll() is None, 'wsr view is still up', v.proc.poll())
        for q, what in (("SELECT load_extension('/tmp/x.so')", 'load_extension'),
                        ('PRAGMA user_version = 7', 'a PRAGMA write'),
                        ('PRAGMA table_info(meta)', 'a PRAGMA read'),
                        ("ATTACH DATABASE '%s' AS x" % os.path.join(tmp, 'x.db'), 'ATTACH'),
                        ("SELECT sqlite_compileoption_get(0)", 'sqlite_compileoption_get'),
                        ("SELECT rtreenode(2, x'00')", 'rtreenode')):
            a = sql(v, q)
            ok(a[0] == 200 and 'rows' not in a[1] and a[1].get('error'),
               'the console refuses %s' % what, a)
        a = sql(v, 'DELETE FROM meta')
        ok(a[0] == 200 and 'error' in a[1], 'the console refuses DELETE', a)
        a = sql(v, 'SELECT count(*), max(json_array_length(runq)) FROM schedtrace')
        ok(a[0] == 200 and a[1].get('rows') and a[1]['rows'][0][0] > 0,
           'the console reads the schedtrace view (json_group_array is allowed)', a)
        a = sql(v, "SELECT printf('%d', count(*)), round(avg(latency_ns)), "
                   "json_extract('[1,2]', '$[1]') FROM sched_latency")
        ok(a[0] == 200 and a[1].get('rows'), 'the console runs core, aggregate and JSON '
           'functions', a)
    finally:
        rc = v.stop()
    ok(rc == 0, 'wsr view exits 0 on SIGTERM after the attempts', rc)
    meta = wsrdb.connect(fts, ro=True).execute(
        'SELECT count(*) FROM meta').fetchone()[0]
    ok(meta > 0, 'the database is unchanged', meta)


NSLOW = 200  # as many console queries as the report
SLOW = 'WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r) SELECT count(*) FROM r'


def case_load(wsr, db):
    v = wsrview.View(wsr, db)
    idle = []
    try:
        v.wait_ready()
        paths = ['/api/timeline?px=800', '/api/counters?px=800', '/api/info', '/api/steals']
        before = {p: v.get(p)[2] for p in paths}
        # Idle connections: some never send a byte, some stop inside the headers.
        for i in range(100):
            s = socket.create_connection(('127.0.0.1', v.port), timeout=60)
            if i % 2:
                s.sendall(b'GET /api/info HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n' % v.port)
            idle.append(s)
        answers = []

        def slow():
            try:  # View.get opens a connection of its own: safe from any thread
                answers.append(v.json('/api/sql?q=' + urllib.parse.quote(SLOW), timeout=120))
            except Exception as e:  # noqa: BLE001
                answers.append((None, repr(e)))

        threads = [threading.Thread(target=slow) for _ in range(NSLOW)]
        for t in threads:
            t.start()
        # Until all but 10 have their answer (the 503s come at once): the
        # other 10 are then still queued or running (2 s each, 2 at a time).
        for _ in range(1200):
            if len(answers) >= NSLOW - 10:
                break
            threading.Event().wait(0.05)
        got = {}
        for p in paths:
            try:
                got[p] = v.get(p, timeout=30)
            except Exception as e:  # noqa: BLE001
                got[p] = (None, {}, repr(e).encode())
        running = NSLOW - len(answers)
        open_idle = 0
        for s in idle:
            s.setblocking(False)
            try:
                open_idle += s.recv(1) != b''
            except BlockingIOError:
                open_idle += 1
            except OSError:
                pass
            s.setblocking(True)
        for p in paths:
            ok(got[p][0] == 200 and got[p][2] == before[p],
               'under load: %s answers, the same as before' % p, got[p][:1] + (got[p][2][:200],))
        ok(running > 0, 'those answers came while console queries were still running',
           (running, [a[0] for a in answers]))
        ok(open_idle == len(idle), 'and while the 100 idle connections were open', open_idle)
        for t in threads:
            t.join(180)
        busy = [a for a in answers if a[0] == 503]
        done = [a for a in answers if a[0] == 200]
        ok(len(answers) == NSLOW and len(busy) + len(done) == NSLOW and len(done) >= 10 and
           all('busy' in a[1].get('error', '') for a in busy) and
           all('interrupted' in a[1].get('error', '') for a in done),
           'every console query got an answer: interrupted at the limit, or 503 busy',
           [(a[0], a[1] if a[0] is None else a[1].get('error')) for a in answers])
        # The idle connections: closed by the server's idle timeout.
        closed = 0
        for s in idle:
            s.settimeout(30)
            try:
                while s.recv(4096):
                    pass
                closed += 1
            except OSError:
                pass
        ok(closed == len(idle), 'the server closes idle connections (within 30 s)', closed)
        a = sql(v, 'SELECT count(*) FROM steals')
        n = wsrdb.connect(db, ro=True).execute(
            'SELECT count(*) FROM steals').fetchone()[0]
        ok(a[0] == 200 and a[1].get('rows') == [[n]], 'the console answers again afterwards', a)
    finally:
        for s in idle:
            s.close()
        rc = v.stop()
    ok(rc == 0, 'wsr view exits 0 on SIGTERM after the load', rc)


def case_cross_site(wsr, db):
    v = wsrview.View(wsr, db)
    try:
        v.wait_ready()
        ok(v.token is not None and len(v.token) == 32 and v.url.endswith('/#token=' + v.token),
           'the URL wsr view prints carries a 128-bit token in its fragment', v.line)
        lh = 'localhost:%d' % v.port
        q = '/api/sql?q=' + urllib.parse.quote('SELECT count(*) FROM meta')
        cases = [
            # (what, path, host, headers, token, expected status)
            ('the API with the token', '/api/info', None, {}, True, 200),
            ('the console with the token', q, None, {}, True, 200),
            ('the API without the token', '/api/info', None, {}, False, 403),
            ('the console without the token', q, None, {}, False, 403),
            ('/api/status without the token', '/api/status', None, {}, False, 403),
            ('a wrong token', '/api/info', None, {'X-WSR-Token': '0' * 32}, False, 403),
            ('a token one character short', '/api/info', None,
             {'X-WSR-Token': (v.token or '')[:-1]}, False, 403),
            ('Origin: http://evil.example', '/api/info', None,
             {'Origin': 'http://evil.example'}, True, 403),
            ('Origin: null', q, None, {'Origin': 'null'}, True, 403),
            ("Origin: localhost's on Host 127.0.0.1", '/api/info', None,
             {'Origin': 'http://' + lh}, True, 403),
            ('Origin: the server itself', '/api/info', None,
             {'Origin': 'http://' + v.host}, True, 200),
            ('Sec-Fetch-Site: cross-site', q, None, {'Sec-Fetch-Site': 'cross-site'}, True, 403),
            ('Sec-Fetch-Site: same-site (another port)', '/api/info', None,
             {'Sec-Fetch-Site': 'same-site'}, True, 403),
            ('Sec-Fetch-Site: same-origin', '/api/info', None,
             {'Sec-Fetch-Site': 'same-origin'}, True, 200),
            ('Sec-Fetch-Site: none', '/api/info', None, {'Sec-Fetch-Site': 'none'}, True, 200),
            ('Host: localhost:PORT, the API', '/api/info', lh, {}, True, 200),
            ('Host: localhost:PORT, the page', '/', lh, {}, False, 200),
            ('Host: localhost:PORT with its own Origin', '/api/info', lh,
             {'Origin': 'http://' + lh}, True, 200),
            ('Host: localhost (no port)', '/', 'localhost', {}, False, 421),
            ('Host: evil.example:PORT', '/api/info', 'evil.example:%d' % v.port, {}, True, 421),
            ('the page from a cross-site link', '/', None, {'Sec-Fetch-Site': 'cross-site'},
             False, 200),
        ]
        for what, path, host, headers, token, want in cases:
            try:
                status = v.get(path, host=host, headers=headers, token=token)[0]
            except Exception as e:  # noqa: BLE001
                status = repr(e)
            ok(status == want, '%s: %d' % (what, want), status)
        tok = b'X-WSR-Token: %s\r\n' % (v.token or '').encode()
        good = b'Host: %s\r\n' % v.host.encode()
        raw = [
            ('a second Host after the right one', good + b'Host: evil.example\r\n' + tok, 421),
            ('a second Host before the right one', b'Host: evil.example\r\n' + good + tok, 421),
            ('the right Host twice', good + good + tok, 421),
            ('no Host', tok, 421),
            ('two tokens (the right one first)',
             good + tok + b'X-WSR-Token: %s\r\n' % (b'0' * 32), 403),
            ('two Origins (the right one first)',
             good + tok + b'Origin: http://%s\r\nOrigin: http://evil.example\r\n' %
             v.host.encode(), 403),
            ('one Host, one token', good + tok, 200),
        ]
        for what, headers, want in raw:
            for path in ('/api/info', '/') if want == 421 else ('/api/info',):
                status = v.raw(b'GET %s HTTP/1.1\r\n%sConnection: close\r\n\r\n' %
                               (path.encode(), headers))
                ok(status == want, '%s on %s: %d' % (what, path, want), status)
    finally:
        rc = v.stop()
    ok(rc == 0, 'wsr view exits 0 on SIGTERM', rc)


def main():
    build = os.environ.get('WSR_BUILD_ROOT', '.')
    wsr = os.path.join(build, 'analyzer', 'wsr')
    example = os.path.join(build, 'examples', os.environ.get('WSR_EXAMPLE', 'skewed'))
    args = os.environ.get('WSR_EXAMPLE_ARGS', '20000 300').split()
    with tempfile.TemporaryDirectory(prefix='wsr-server-') as tmp:
        trace = os.path.join(tmp, 'trace')
        r = subprocess.run([wsr, 'run', '--out', trace, '--lossless', '--', example] + args,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        db = os.path.join(trace, 'trace.db')
        if not ok(os.path.exists(db), 'wsr run recorded %s' % os.path.basename(example),
                  r.stderr[-1000:]):
            print('1..%d' % count)
            return 1
        case_console(wsr, db, tmp)
        case_load(wsr, db)
        case_cross_site(wsr, db)
    print('1..%d' % count)
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
