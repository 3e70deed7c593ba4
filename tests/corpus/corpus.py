#!/usr/bin/env python3
# corpus.py - the analyzer corpus (README.md here): re-ingests every recorded trace of
# traces.tar.xz with the built `wsr` and compares each output, byte for byte, with the one
# the analyzer gave when the corpus was last regenerated (expected/).
#
# Usage: corpus.py WSR [--regen]      (TAP on stdout; exit 0 pass, 1 fail)
#   --regen writes expected/ from this WSR instead of comparing (regen.sh calls it so).
#
# What is compared, per trace NAME (the table COMMANDS below): `wsr ingest`, `wsr report` in
# every format (text, md, json, junit, html) and with --detail, --interval and
# --steal-graph, `wsr check` on three gates (output and exit status), `wsr export
# --perfetto`, and the user-visible SQL: every table and view that docs/schema.md lists,
# `SELECT` of its columns (as of the corpus) `ORDER BY` every one of them, as text. Then `wsr diff` of the
# pairs in DIFFS. Each command's record holds its argv, exit status, stdout, stderr and the
# file it wrote (-o), so nothing it prints escapes the comparison.
#
# Invariants:
#   - The commands run in a fresh temporary directory with relative paths (the trace is
#     NAME, the database NAME.db), so the paths the analyzer prints and stores (meta
#     trace_path, the report's headline) are the same on every machine.
#   - One thing is normalised, nothing else: the timing in `wsr ingest`'s summary line
#     ("in 0.37 s (0.05M events/s)"), which is the analyzer's own wall time, not a figure
#     of the trace (INGEST_TIMING). Nothing the analyzer writes may name the temporary
#     directory: stream files are named relative to the trace (`discarded.stream`, the
#     report's "events lost ... (stream PATH)"), so an absolute path would fail here.
#   - The SQL dump reads the objects and columns named in the expected dump's headers, not
#     the database's own list: a new schema version that keeps today's table, view and
#     column names (as views where needed) and adds columns (or meta keys) still passes;
#     one that drops or renames one of them, or changes a value, fails.
#   - A record larger than BIG bytes is stored xz-compressed (NAME.xz); the rule is the
#     same when writing and reading, and every expected file must be produced (no stale
#     expectation passes unseen).
# Concurrency: one process; the temporary directory is its own.
import difflib
import lzma
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tarfile
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'lib'))
from tap import done, note, ok  # noqa: E402
import tap  # noqa: E402
import wsrdb  # noqa: E402

TRACES = os.path.join(HERE, 'traces.tar.xz')
EXPECTED = os.path.join(HERE, 'expected')
SCHEMA_DOC = os.path.join(HERE, '..', '..', 'docs', 'schema.md')
BIG = 64 * 1024

# The analyzer's own wall time in `wsr ingest`'s summary (ingest.c): varies per run.
INGEST_TIMING = re.compile(rb'(\d+ events) in [0-9.]+ s \([0-9.]+M events/s\)')

# (record name, argv after `wsr`, file it writes or None). {n}: the trace name.
COMMANDS = [
    ('ingest', ['ingest', '{n}', '-o', '{n}.db'], None),
    ('report-text', ['report', '{n}.db'], None),
    ('report-md', ['report', '{n}.db', '--format', 'md'], None),
    ('report-json', ['report', '{n}.db', '--format', 'json'], None),
    ('report-junit', ['report', '{n}.db', '--format', 'junit'], None),
    ('report-detail', ['report', '{n}.db', '--detail', '--interval', '2ms'], None),
    ('report-interval', ['report', '{n}.db', '--interval', '500us'], None),
    ('report-steal-graph', ['report', '{n}.db', '--steal-graph', 'dot'], None),
    ('report-html', ['report', '--format', 'html', '-o', '{n}.html', '{n}.db'], '{n}.html'),
    ('export-perfetto', ['export', '--perfetto', '{n}.db', '-o', '{n}.perfetto-trace'],
     '{n}.perfetto-trace'),
    ('check-loss', ['check', '{n}.db', '--fail-if', 'discarded > 0'], None),
    ('check-sched', ['check', '{n}.db', '--fail-if', 'steals == 0', '--fail-if',
                     'latency_p99_us > 1000', '--fail-if', 'runnext_hit_pct < 50'], None),
    ('check-dag', ['check', '{n}.db', '--fail-if', 'parallelism < 1.5', '--fail-if',
                   'bound_position >= 0.5', '--fail-if', 'gs != 2001'], None),
]
# (base, new) pairs for `wsr diff`, in every format it has.
DIFFS = [('fib-p1', 'fib-p2'), ('fib-p2', 'skewed-p8'), ('io-p2', 'lossy-p2')]
DIFF_FORMATS = ['text', 'md', 'json']


def run_record(wsr, argv, cwd, outfile, env):
    p = subprocess.run([wsr] + argv, cwd=cwd, env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    out, err = p.stdout, p.stderr
    if argv[0] == 'ingest':
        out = INGEST_TIMING.sub(rb'\1 in (time)', out)
        err = INGEST_TIMING.sub(rb'\1 in (time)', err)
    rec = b'$ wsr ' + ' '.join(argv).encode() + b'\nexit %d\n' % p.returncode
    rec += b'--- stdout %d bytes\n' % len(out) + out
    rec += b'--- stderr %d bytes\n' % len(err) + err
    if outfile is not None:
        path = os.path.join(cwd, outfile)
        if os.path.exists(path):
            with open(path, 'rb') as f:
                data = f.read()
            rec += b'--- file %s %d bytes\n' % (outfile.encode(), len(data)) + data
        else:
            rec += b'--- file %s missing\n' % outfile.encode()
    return rec


def documented_names():
    """Tables and views named in docs/schema.md's two tables (`name` or `name(`), but the
    storage of the column-block tables (NAME_block, NAME_zone): their rows are compared
    through NAME, and the codec's bytes are not an output."""
    with open(SCHEMA_DOC) as f:
        text = f.read()
    names = set(re.findall(r'^\| `([a-z_0-9]+)[`(]', text, re.M)) | set(
        re.findall(r'`(ev_[a-z_]+)`', text)) | set(re.findall(r'`(enum_[a-z_]+)\(', text))
    return {n for n in names if not (n.endswith('_block') or n.endswith('_zone'))}


def sql_objects_now(db):
    """(name, [columns]) of every documented table and view of db, by name."""
    doc = documented_names()
    objs = []
    for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')"
                              " ORDER BY name"):
        if name in doc:
            objs.append((name, [r[1] for r in db.execute('PRAGMA table_info("%s")' % name)]))
    return objs


HEADER = re.compile(rb'^## ([a-z_0-9]+)\((.*)\)$', re.M)


def sql_objects_expected(rec):
    return [(m.group(1).decode(), m.group(2).decode().split(', ')) for m in HEADER.finditer(rec)]


def meta_keys_expected(rec):
    """The keys of the expected dump's meta rows (meta's rows are its columns, in effect)."""
    m = re.search(rb'^## meta\(key, value\)\n(.*?)(?=^## )', rec, re.M | re.S)
    if m is None:
        return None
    return {line.split(b'\t', 1)[0].decode() for line in m.group(1).splitlines()}


def fmt(v):
    if v is None:
        return 'NULL'
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, bytes):
        return 'X' + v.hex()
    if isinstance(v, int):
        return str(v)
    return v.replace('\\', '\\\\').replace('\t', '\\t').replace('\n', '\\n')


def sql_dump(dbpath, objs, meta_keys=None):
    """The text dump of objs ((name, [columns]); None: the database's own documented ones);
    meta only for meta_keys when given (a new meta key is a new column: not compared)."""
    db = wsrdb.connect(dbpath, ro=True)
    if objs is None:
        objs = sql_objects_now(db)
    parts = []
    for name, cols in objs:
        parts.append('## %s(%s)\n' % (name, ', '.join(cols)))
        q = 'SELECT %s FROM "%s" ORDER BY %s' % (
            ', '.join('"%s"' % c for c in cols), name, ', '.join(
                str(i + 1) for i in range(len(cols))))
        try:
            for row in db.execute(q):
                if name == 'meta' and meta_keys is not None and row[0] not in meta_keys:
                    continue
                parts.append('\t'.join(fmt(v) for v in row) + '\n')
        except sqlite3.Error as e:
            parts.append('error: %s\n' % e)
    db.close()
    return ''.join(parts).encode()


def expected_path(name):
    """The stored file of record name (plain or .xz), or None."""
    for p in (os.path.join(EXPECTED, name), os.path.join(EXPECTED, name + '.xz')):
        if os.path.exists(p):
            return p
    return None


def read_expected(name):
    p = expected_path(name)
    if p is None:
        return None
    if p.endswith('.xz'):
        with lzma.open(p) as f:
            return f.read()
    with open(p, 'rb') as f:
        return f.read()


def write_expected(name, data):
    p = os.path.join(EXPECTED, name)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    for old in (p, p + '.xz'):
        if os.path.exists(old):
            os.unlink(old)
    if len(data) > BIG:
        # preset 9, one thread: the same bytes from the same record on every machine.
        with open(p + '.xz', 'wb') as f:
            f.write(lzma.compress(data, preset=9))
    else:
        with open(p, 'wb') as f:
            f.write(data)


def viewer_of(wsr):
    """wsr-view where `wsr` looks for it first (analyzer/wsr.c, exec_sibling), or None."""
    d = os.path.dirname(wsr)
    for p in (os.path.join(d, 'wsr-view'), os.path.join(d, '..', 'viewer', 'wsr-view')):
        if os.access(p, os.X_OK):
            return p
    return None


def skip(name, why, produced):
    produced.add(name)
    tap._n += 1
    print('ok %d - %s # SKIP %s' % (tap._n, name, why))


def compare(name, got, produced):
    produced.add(name)
    want = read_expected(name)
    if want is None:
        return ok(False, '%s: expected output exists' % name,
                  'no %s[.xz]: run tests/corpus/regen.sh (README.md)' % os.path.join(
                      EXPECTED, name))
    diag = ''
    if got != want:
        a = want.decode(errors='replace').splitlines()
        b = got.decode(errors='replace').splitlines()
        diag = '\n'.join(difflib.unified_diff(a, b, 'expected/' + name, 'now', n=1,
                                              lineterm=''))
        if not diag:
            diag = 'the bytes differ (line endings or a final newline)'
    return ok(got == want, '%s: byte-identical' % name, diag)


def main():
    if len(sys.argv) not in (2, 3) or (len(sys.argv) == 3 and sys.argv[2] != '--regen'):
        print('usage: corpus.py WSR [--regen]', file=sys.stderr)
        return 2
    wsr = os.path.abspath(sys.argv[1])
    regen = len(sys.argv) == 3
    env = dict(os.environ)
    # The analyzer formats with the C locale; pin it and the zone for the host's settings.
    env['LC_ALL'] = 'C'
    env['TZ'] = 'UTC'
    tmp = tempfile.mkdtemp(prefix='wsr-corpus-')
    produced = set()
    try:
        with tarfile.open(TRACES) as tf:
            tf.extractall(tmp)
        names = sorted(d for d in os.listdir(tmp) if os.path.isdir(os.path.join(tmp, d)))
        note('traces: %s (in %s)' % (' '.join(names), tmp))
        if regen and os.path.isdir(EXPECTED):
            shutil.rmtree(EXPECTED)
        viewer = viewer_of(wsr)
        if regen and viewer is None:
            print('corpus.py: --regen needs wsr-view (a build with -Dviewer=enabled)',
                  file=sys.stderr)
            return 2
        for n in names:
            for rname, argv, outfile in COMMANDS:
                argv = [a.format(n=n) for a in argv]
                if rname == 'report-html' and viewer is None:
                    # The HTML report is written by wsr-view, absent from this build
                    # (the Perfetto export is wsr's own: analyzer/perfetto.c).
                    skip('%s/%s' % (n, rname), 'no wsr-view in this build', produced)
                    continue
                rec = run_record(wsr, argv, tmp, outfile and outfile.format(n=n), env)
                key = '%s/%s' % (n, rname)
                if regen:
                    write_expected(key, rec)
                else:
                    compare(key, rec, produced)
            key = '%s/sql' % n
            dbpath = os.path.join(tmp, n + '.db')
            if not os.path.exists(dbpath):
                ok(regen, '%s: database written' % key)
                continue
            if regen:
                write_expected(key, sql_dump(dbpath, None))
            else:
                want = read_expected(key)
                objs = sql_objects_expected(want) if want is not None else None
                keys = meta_keys_expected(want) if want is not None else None
                compare(key, sql_dump(dbpath, objs, keys), produced)
        for base, new in DIFFS:
            for f in DIFF_FORMATS:
                argv = ['diff', base + '.db', new + '.db', '--format', f]
                rec = run_record(wsr, argv, tmp, None, env)
                key = 'diff/%s--%s.%s' % (base, new, f)
                if regen:
                    write_expected(key, rec)
                else:
                    compare(key, rec, produced)
        if regen:
            ok(True, 'expected outputs written to %s' % EXPECTED)
        else:
            stale = []
            for root, _, files in os.walk(EXPECTED):
                for fn in files:
                    rel = os.path.relpath(os.path.join(root, fn), EXPECTED)
                    if rel.endswith('.xz'):
                        rel = rel[:-3]
                    if rel not in produced:
                        stale.append(rel)
            ok(not stale, 'every expected output is produced', '\n'.join(sorted(stale)))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return done()


if __name__ == '__main__':
    sys.exit(main())
