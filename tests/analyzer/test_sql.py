#!/usr/bin/env python3
# test_sql.py - `wsr sql`: the sqlite3 shell on a trace database, read-only, with
# the module that serves events and p_counters (docs/man/wsr-sql.1.scd). TAP.
#
#   test_sql.py WSR CORPUS_TRACES_TAR_XZ
#
# On a corpus trace ingested here: the shell's answers equal the test's own
# connection's (tests/lib/wsrdb.py) on events, p_counters and the ev_* views;
# the shell's options and statements pass through; stdin is read when no
# statement is given; the extension is found beside wsr without WSR_SQLITE_EXT;
# a write fails and leaves the file byte for byte; bad input (no operand, a
# missing file, a file that is not a wsr database, an extension or a shell that
# cannot be found) gets a message and a non-zero exit.
# Invariants: every file lives under one TemporaryDirectory.
import hashlib
import os
import sys
import tarfile
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'lib'))
from tap import done, ok, run  # noqa: E402
import wsrdb  # noqa: E402


def digest(path):
    with open(path, 'rb') as f:
        return hashlib.sha256(f.read()).hexdigest()


def main(argv):
    wsr, corpus = argv[1], argv[2]
    with tempfile.TemporaryDirectory(prefix='wsr-test-sql-') as tmp:
        with tarfile.open(corpus) as t:
            t.extractall(tmp)
        db = os.path.join(tmp, 'fib.db')
        r = run([wsr, 'ingest', os.path.join(tmp, 'fib-p2'), '-o', db, '-q'])
        ok(r.returncode == 0, 'the corpus trace fib-p2 ingests', r.stderr)
        con = wsrdb.connect(db, ro=True)
        queries = [
            'SELECT name, count(*), min(ts), max(ts), total(g) FROM events GROUP BY name ORDER BY name',
            'SELECT p, count(*), max(runq), max(schedticks) FROM p_counters GROUP BY p ORDER BY p',
            'SELECT count(*), min(ts) FROM ev_g_run WHERE g > 10',
            "SELECT id, ts, name FROM events WHERE ts >= (SELECT value FROM meta WHERE key = 'start_ts') "
            'ORDER BY ts DESC, id DESC LIMIT 5',
        ]
        for q in queries:
            want = '\n'.join('|'.join('' if v is None else str(v) for v in row)
                             for row in con.execute(q)) + '\n'
            r = run([wsr, 'sql', db, q])
            ok(r.returncode == 0 and r.stdout == want, 'wsr sql answers as the module does: ' + q,
               'rc %d\n%s\nwant:\n%s\ngot:\n%s' % (r.returncode, r.stderr, want, r.stdout))
        n = con.execute('SELECT count(*) FROM events').fetchone()[0]
        con.close()
        r = run([wsr, 'sql', db, '-header', '-csv', 'SELECT count(*) AS n FROM events'])
        ok(r.returncode == 0 and r.stdout == 'n\n%d\n' % n,
           "the shell's options after trace.db pass through (-header -csv)", r.stdout + r.stderr)
        r = run([wsr, 'sql', db], input='SELECT count(*) FROM events;\n.tables p_counters\n')
        ok(r.returncode == 0 and r.stdout.split() == [str(n), 'p_counters'],
           'without a statement it reads statements and dot-commands from stdin',
           r.stdout + r.stderr)
        env = {k: v for k, v in os.environ.items() if k != 'WSR_SQLITE_EXT'}
        r = run([wsr, 'sql', db, 'SELECT count(*) FROM events'], env=env)
        ok(r.returncode == 0 and r.stdout.strip() == str(n),
           'without WSR_SQLITE_EXT it finds the extension beside wsr', r.stdout + r.stderr)
        before = digest(db)
        r = run([wsr, 'sql', db, 'DELETE FROM meta'])
        ok(r.returncode != 0 and 'readonly' in r.stderr and digest(db) == before,
           'the shell is read-only: a DELETE fails and the file is unchanged', r.stderr)
        r = run([wsr, 'sql'])
        ok(r.returncode == 2 and 'no trace database' in r.stderr, 'no operand: usage error',
           r.stderr)
        r = run([wsr, 'sql', os.path.join(tmp, 'missing.db'), 'SELECT 1'])
        ok(r.returncode == 2 and 'missing.db' in r.stderr and r.stdout == '',
           'a missing file: wsr names it, the shell does not run', r.stderr)
        junk = os.path.join(tmp, 'junk.db')
        with open(junk, 'w') as f:
            f.write('not a database\n')
        r = run([wsr, 'sql', junk, 'SELECT 1'])
        ok(r.returncode == 2 and 'not a wsr database' in r.stderr and
           open(junk).read() == 'not a database\n',
           'a file that is not a wsr database: refused, left as it was', r.stderr)
        r = run([wsr, 'sql', db, 'SELECT 1'], env=dict(os.environ, WSR_SQLITE_EXT='/nonexistent'))
        ok(r.returncode == 1 and 'WSR_SQLITE_EXT names /nonexistent' in r.stderr,
           'WSR_SQLITE_EXT naming no file: exit 1, says so',
           r.stderr)
        r = run([wsr, 'sql', db, 'SELECT 1'], env=dict(os.environ, PATH='/nonexistent'))
        ok(r.returncode == 1 and 'apt install sqlite3' in r.stderr,
           'no sqlite3 shell: exit 1, says which package', r.stderr)
    return done()


if __name__ == '__main__':
    sys.exit(main(sys.argv))
