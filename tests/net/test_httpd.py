#!/usr/bin/env python3
# test_httpd.py - examples/httpd (an HTTP/1.1 server on libwsr) under wrk and
# a hand-written client: the bounded version of bench/httpd.py (issue 17).
#
# Usage: test_httpd.py HTTPD_EXE [SECONDS]      (TAP on stdout; exit 0 pass, 1 fail)
#
# Starts the server on a free loopback port at WSRMAXPROCS=2 and checks:
#   - the protocol: static body and /work's body (the hash computed here),
#     HEAD, 404/405, bodies with Content-Length and chunked, a pipelined batch
#     answered in order, a request written a byte at a time, "Connection:
#     close" and HTTP/1.0 closing, keep-alive on HTTP/1.0, 400 on malformed
#     input and 431 on an oversized header, each followed by a close;
#   - wrk on / and on /work, SECONDS each (default 2), with the request and
#     response counting of bench/httpd-wrk.lua: no socket error, no status
#     above 399, every response wrk counted in its total, and no request
#     left unanswered but the ones in flight when wrk stopped (at most one
#     per connection);
#   - the server still answers afterwards;
#   - SIGTERM with an idle keep-alive connection open: the server closes it,
#     exits 0, and its counters agree with what was sent (every request it
#     parsed was answered, the bad ones counted, no I/O error);
#   - bench/go/httpd, the benchmark's Go peer, sends the same bytes for / and
#     /work (the Date value aside), so that the benchmark compares like with
#     like; skipped when the Go peer is not built (BUILD/bench/wsrhttpd-go).
# No time is asserted: wrk's --timeout is 60 s and the start/stop waits are
# hang detectors only (bench/httpd.py's Server), so load on the machine
# cannot fail the test.
import os
import re
import signal
import socket
import sys

SRC = os.environ.get('WSR_SOURCE_ROOT',
                     os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(SRC, 'bench'))
import httpd as bench  # noqa: E402  (bench/httpd.py: Server, run_wrk, parse_counters)

ROUNDS = 5000
CONNS = 16
PLAN = 18


class Tap:
    def __init__(self):
        self.n = 0
        self.failed = 0

    def ok(self, cond, name, diag=''):
        self.n += 1
        print(f'{"ok" if cond else "not ok"} {self.n} - {name}', flush=True)
        if not cond:
            self.failed += 1
            for line in str(diag).splitlines():
                print(f'# {line}', flush=True)
        return cond

    def note(self, msg):
        for line in str(msg).splitlines():
            print(f'# {line}', flush=True)


def work_hash(data, rounds=ROUNDS):
    # examples/httpd.c's work_body(): FNV-1a's constants over the file's first 4 KiB.
    h, j, n = 14695981039346656037, 0, len(data)
    for _ in range(rounds):
        h = ((h ^ data[j]) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
        j += 1
        if j == n:
            j = 0
    return f'work={h:016x}\n'.encode()


class Conn:
    """A client connection that reads responses one at a time from one buffer."""

    def __init__(self, port):
        self.s = socket.create_connection(('127.0.0.1', port), timeout=60)
        self.f = self.s.makefile('rb')

    def send(self, data):
        self.s.sendall(data)

    def response(self, head=False):
        """(status, version, headers dict lowercased, body), or None at EOF."""
        line = self.f.readline()
        if not line:
            return None
        version, status = line.split()[0].decode(), int(line.split()[1])
        headers = {}
        while True:
            h = self.f.readline()
            if h in (b'\r\n', b''):
                break
            k, _, v = h.decode().partition(':')
            headers[k.strip().lower()] = v.strip()
        n = 0 if head else int(headers.get('content-length', '0'))
        body = self.f.read(n) if n else b''
        return status, version, headers, body

    def at_eof(self):
        return self.f.read(1) == b''

    def close(self):
        self.f.close()
        self.s.close()


def get(path, host=True, extra=''):
    return (f'GET {path} HTTP/1.1\r\n' + ('Host: t\r\n' if host else '') + extra + '\r\n').encode()


def protocol_checks(t, port, workbody):
    """Returns (requests sent, bad requests sent)."""
    sent = bad = 0
    c = Conn(port)
    c.send(get('/'))
    r = c.response()
    sent += 1
    t.ok(r is not None and r[0] == 200 and r[3] == b'Hello, World!\n' and
         r[2].get('content-length') == '14' and 'date' in r[2], 'GET / is 200 with the static body', r)

    c.send(get('/work'))
    r = c.response()
    sent += 1
    t.ok(r is not None and r[0] == 200 and r[3] == workbody,
         '/work answers the hash of the file\'s first 4 KiB', f'{r} want {workbody}')

    c.send(b'HEAD / HTTP/1.1\r\nHost: t\r\n\r\n')
    r = c.response(head=True)
    sent += 1
    t.ok(r is not None and r[0] == 200 and r[2].get('content-length') == '14',
         'HEAD / has the headers, no body', r)

    c.send(get('/nope') + b'POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nhello' +
           b'POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n'
           b'3\r\nabc\r\n0\r\n\r\n' + get('/'))
    rs = [c.response() for _ in range(4)]
    sent += 4
    t.ok([r[0] if r else None for r in rs] == [404, 405, 405, 200] and rs[3][3] == b'Hello, World!\n'
         and rs[1][2].get('allow') == 'GET, HEAD',
         'pipelined 404, 405 (Content-Length body), 405 (chunked body), 200, in order', rs)

    batch = get('/') + get('/work') + get('/') * 20
    c.send(batch)
    rs = [c.response() for _ in range(22)]
    sent += 22
    t.ok(all(r is not None and r[0] == 200 for r in rs) and rs[1][3] == workbody,
         'a pipelined batch of 22 requests in one write is answered in order', rs[:3])

    req = get('/work')
    for i in range(len(req)):
        c.send(req[i:i + 1])
    r = c.response()
    sent += 1
    t.ok(r is not None and r[0] == 200 and r[3] == workbody, 'a request written a byte at a time', r)

    c.send(get('/', extra='Connection: close\r\n') + get('/'))
    r = c.response()
    sent += 1
    t.ok(r is not None and r[0] == 200 and r[2].get('connection') == 'close' and c.at_eof(),
         '"Connection: close" is answered with it, then the connection closes '
         '(the request behind it is not answered)', r)
    c.close()

    c = Conn(port)
    c.send(b'GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n')
    r = c.response()
    c.send(b'GET / HTTP/1.0\r\n\r\n')
    r2 = c.response()
    sent += 2
    t.ok(r is not None and r[1] == 'HTTP/1.0' and r[2].get('connection') == 'keep-alive' and
         r2 is not None and r2[0] == 200 and r2[2].get('connection') == 'close' and c.at_eof(),
         'HTTP/1.0: kept alive when asked, closed otherwise', (r, r2))
    c.close()

    c = Conn(port)
    c.send(get('/') + b'GARBAGE\x01 / HTTP/1.1\r\n\r\n')
    r, r2 = c.response(), c.response()
    sent += 2
    bad += 1
    t.ok(r is not None and r[0] == 200 and r2 is not None and r2[0] == 400 and
         r2[2].get('connection') == 'close' and c.at_eof(),
         'malformed input after a good request: 200, then 400 and a close', (r, r2))
    c.close()

    c = Conn(port)
    c.send(b'GET / HTTP/1.1\r\nHost: t\r\nX-Big: ' + b'a' * 9000 + b'\r\n\r\n')
    r = c.response()
    sent += 1
    bad += 1
    t.ok(r is not None and r[0] == 431 and c.at_eof(), 'a 9000-byte header is 431, then a close', r)
    c.close()
    return sent, bad


def raw_responses(port):
    """The bytes of GET / and GET /work on one connection, the Date value masked."""
    s = socket.create_connection(('127.0.0.1', port), timeout=60)
    s.sendall(get('/') + get('/work', extra='Connection: close\r\n'))
    data = b''
    while True:
        x = s.recv(65536)
        if not x:
            break
        data += x
    s.close()
    return re.sub(rb'Date: [^\r]*', b'Date: -', data)


def same_bytes_as_go(t, exe, workfile):
    build = os.environ.get('WSR_BUILD_ROOT',
                           os.path.dirname(os.path.dirname(os.path.abspath(exe))))
    go_exe = os.path.join(build, 'bench', 'wsrhttpd-go')
    if not os.path.exists(go_exe):
        t.n += 1
        print(f'ok {t.n} - # SKIP {go_exe} not built (golang-go)', flush=True)
        return
    got = {}
    for name, cmd in (('wsr', [exe, '--rounds', str(ROUNDS), '--file', workfile]),
                      ('go', [go_exe, '-rounds', str(ROUNDS), '-file', workfile])):
        s = bench.Server(cmd, dict(os.environ, WSRMAXPROCS='1', GOMAXPROCS='1'))
        try:
            got[name] = raw_responses(s.port)
        finally:
            s.stop()
    t.ok(got['wsr'] == got['go'] and b'work=' in got['wsr'],
         'the Go peer sends the same bytes for / and /work (Date aside)',
         f'wsr: {got["wsr"]!r}\ngo:  {got["go"]!r}')


def main():
    exe = sys.argv[1]
    secs = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    t = Tap()
    print(f'1..{PLAN}', flush=True)
    try:
        bench.wrk_path()
    except bench.HttpdError as e:
        print(f'Bail out! {e}; scripts/setup.sh installs it')
        return 1
    tmp = os.environ.get('TMPDIR', '/tmp')
    workfile = os.path.join(tmp, f'test-httpd-{os.getpid()}.bin')
    data = bytes((i * 131 + 7) % 256 for i in range(4096))
    with open(workfile, 'wb') as f:
        f.write(data)
    env = dict(os.environ, WSRMAXPROCS='2', WSRDEBUG='stats=1')
    s = None
    try:
        s = bench.Server([exe, '--rounds', str(ROUNDS), '--file', workfile], env)
        t.ok(s.port is not None, f'server listening on 127.0.0.1:{s.port}')
        sent, bad = protocol_checks(t, s.port, work_hash(data))

        received = 0
        for path in ('/', '/work'):
            w = bench.run_wrk(s.port, path, CONNS, secs, count=True, timeout='60s')
            t.note(f'wrk {path}: {w["requests"]} requests in {w["duration_us"] / 1e6:.2f} s, '
                   f'sent {w["sent"]}, received {w["received"]}, p99 {w["p99_us"]} µs')
            t.ok(bench.wrk_errors(w) == '' and w['requests'] > 0 and w['received'] == w['requests']
                 and 0 <= w['sent'] - w['received'] <= CONNS,
                 f'wrk on {path}: no socket error, no 4xx/5xx, every request answered but '
                 f'those in flight at the end (<= {CONNS})', w)
            sent += w['sent']
            received += w['received']

        c = Conn(s.port)
        c.send(get('/') + get('/work'))
        r, r2 = c.response(), c.response()
        sent += 2
        t.ok(r is not None and r[0] == 200 and r2 is not None and r2[3] == work_hash(data),
             'the server still answers after the load', (r, r2))

        # An idle keep-alive connection open across the SIGTERM: Shutdown closes it.
        status, out, err, _ = s.stop()
        s = None
        t.ok(status == 0, 'SIGTERM: the server exits 0', f'exit {status}\n{out}\n{err}')
        t.ok(c.at_eof(), 'the idle keep-alive connection was closed by the shutdown')
        c.close()
        cnt = bench.parse_counters(out + err)
        t.note(' '.join(f'{k}={v}' for k, v in cnt.items() if k != 'stats'))
        ok = all(k in cnt for k in ('requests', 'responses', 'responses_lost', 'bad_requests',
                                    'io_errors'))
        t.ok(ok and cnt['requests'] == cnt['responses'] and cnt['io_errors'] == 0 and
             cnt['bad_requests'] == bad and
             sent >= cnt['requests'] >= received and
             cnt['responses'] - cnt['responses_lost'] >= received,
             'the counters agree: every parsed request answered, the bad ones counted, '
             f'no I/O error ({sent} sent in all, {received} received by wrk)', out + err)
        same_bytes_as_go(t, exe, workfile)
    except (bench.HttpdError, OSError, ValueError, IndexError) as e:
        t.ok(False, 'no exception', repr(e))
    finally:
        if s is not None:
            s.kill()
        os.unlink(workfile)
    while t.n < PLAN:
        t.ok(False, 'not reached')
    return 1 if t.failed else 0


if __name__ == '__main__':
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    sys.exit(main())
