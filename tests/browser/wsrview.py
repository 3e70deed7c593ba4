# wsrview.py - starts `wsr view DB` for a test and talks HTTP to it (python3
# standard library only): the URL and the per-run token from the one line the
# server prints, GET with any Host and headers, raw bytes for requests that
# http.client refuses to make (a duplicate Host), a bounded wait for the
# background loaders, and SIGTERM at the end.
#
# Invariants: every wait is bounded (a count of tries or a socket timeout);
#   the server is stopped by its own pid; only 127.0.0.1 is ever contacted.
import http.client
import json
import re
import select
import signal
import socket
import subprocess
import time

URL_RE = re.compile(r'http://127\.0\.0\.1:(\d+)/(#token=([0-9a-f]+))?')


class View:
    def __init__(self, wsr, db, env=None, timeout=30):
        self.proc = subprocess.Popen([wsr, 'view', db], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=env)
        line = b''
        end = time.monotonic() + timeout
        while b'\n' not in line:
            left = end - time.monotonic()
            if left <= 0 or not select.select([self.proc.stdout], [], [], left)[0]:
                self.stop()
                raise RuntimeError('no URL from wsr view in %d s' % timeout)
            b = self.proc.stdout.read1(4096)
            if not b:
                err = self.proc.stderr.read().decode(errors='replace')
                raise RuntimeError('wsr view exited %s: %s' % (self.proc.wait(), err))
            line += b
        self.line = line.decode().strip()
        m = URL_RE.search(self.line)
        if m is None:
            self.stop()
            raise RuntimeError('no URL in %r' % self.line)
        self.url = m.group(0)
        self.port = int(m.group(1))
        self.token = m.group(3)
        self.host = '127.0.0.1:%d' % self.port

    def get(self, path, host=None, headers=None, token=True, timeout=60):
        """GET path; returns (status, {header: value}, body bytes)."""
        h = {'Host': host or self.host}
        if token and self.token:
            h['X-WSR-Token'] = self.token
        h.update(headers or {})
        c = http.client.HTTPConnection('127.0.0.1', self.port, timeout=timeout)
        try:
            c.request('GET', path, headers=h)
            r = c.getresponse()
            body = r.read()
            return r.status, {k.lower(): v for k, v in r.getheaders()}, body
        finally:
            c.close()

    def json(self, path, **kw):
        status, _, body = self.get(path, **kw)
        return status, json.loads(body)

    def raw(self, data, timeout=60):
        """Sends data as it is; returns the status code of the answer (0: none)."""
        with socket.create_connection(('127.0.0.1', self.port), timeout=timeout) as s:
            s.sendall(data)
            buf = b''
            while b'\r\n' not in buf:
                b = s.recv(4096)
                if not b:
                    break
                buf += b
        m = re.match(rb'HTTP/1\.[01] (\d+)', buf)
        return int(m.group(1)) if m else 0

    def wait_ready(self, parts=('lanes', 'counters', 'metrics', 'latency'), tries=600):
        """Polls /api/status (every 0.1 s, at most tries times) until the parts it
        has are 1."""
        st = None
        for _ in range(tries):
            _, st = self.json('/api/status')
            if any(st.get(p, 0) < 0 for p in parts):
                raise RuntimeError('the viewer failed to load: %r' % st)
            if all(st[p] == 1 for p in parts if p in st):
                return st
            time.sleep(0.1)
        raise RuntimeError('the viewer did not load in time: %r' % st)

    def stop(self, timeout=30):
        """SIGTERM, then the exit status (None if it did not exit in time)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return None
        finally:
            self.proc.stdout.close()
            self.proc.stderr.close()
