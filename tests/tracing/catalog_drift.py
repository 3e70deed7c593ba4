#!/usr/bin/env python3
# catalog_drift.py - no copy of the event catalog may differ from tracepoints/catalog.toml.
#
# Usage: catalog_drift.py gen_catalog.py catalog.toml SRCROOT wsr_catalog.h wsr_tp_events.h \
#            catalog-dump
#
# Checks (TAP), each against what gen_catalog.py derives from the catalog:
#   1. the generated blocks checked in to analyzer/sql/schema.sql, views.sql,
#      docs/tracepoints.md and docs/schema.md (a hand edit of one shows as a diff);
#   2. the two headers the build generated (wsr_catalog.h, wsr_tp_events.h);
#   3. libwsr's compiled LTTng-UST provider: enumerations, events in
#      definition order, every field's name and type in order (read from its
#      probe descriptor by catalog-dump, not from any source text);
#   4. the analyzer's tables: event ids and names, the column of every
#      stored field, the enumerator names, metrics.c's latency_sources;
#   5. the keys of the runtime's `wsr stats:` line, in order (an empty
#      wsr_main with WSRDEBUG=stats=1).
# Concurrency: none.
import difflib
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'lib'))
from tap import done, note, ok, run  # noqa: E402


def diff(a, b, an, bn):
    return ''.join(difflib.unified_diff(a.splitlines(True), b.splitlines(True), an, bn))


def main(argv):
    if len(argv) != 7:
        print('usage: catalog_drift.py gen_catalog.py catalog.toml SRCROOT '
              'wsr_catalog.h wsr_tp_events.h catalog-dump')
        return 2
    gen, toml, root, built_cat, built_tp, dump = argv[1:]
    py = sys.executable

    r = run([py, gen, toml, 'check', root])
    ok(r.returncode == 0, 'the checked-in generated blocks equal the catalog\'s',
       r.stdout + r.stderr)

    with tempfile.TemporaryDirectory() as tmp:
        cat_h, tp_h = os.path.join(tmp, 'wsr_catalog.h'), os.path.join(tmp, 'wsr_tp_events.h')
        r = run([py, gen, toml, 'headers', cat_h, tp_h])
        ok(r.returncode == 0, 'the generator writes the headers', r.stderr)
        for fresh, built in ((cat_h, built_cat), (tp_h, built_tp)):
            a, b = open(fresh).read(), open(built).read()
            ok(a == b, 'the built %s is what the catalog generates' % os.path.basename(built),
               diff(a, b, 'generated', built))

    for what in ('provider', 'analyzer'):
        want = run([py, gen, toml, 'expect', what])
        got = run([dump, what])
        if what == 'provider' and got.returncode == 77:
            note('SKIP the compiled provider: ' + got.stderr.strip())
            continue
        ok(want.returncode == 0 and got.returncode == 0 and want.stdout == got.stdout,
           'the built %s holds the catalog' % what,
           want.stderr + got.stderr + diff(want.stdout, got.stdout, 'catalog.toml', 'built ' + what))

    want = run([py, gen, toml, 'expect', 'stats']).stdout.split()
    got = subprocess.run([dump, 'stats'], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=dict(os.environ, WSRMAXPROCS='1'))
    line = next((ln for ln in got.stderr.splitlines() if ln.startswith('wsr stats:')), '')
    keys = re.findall(r' (\w+)=\d+', line)
    ok(got.returncode == 0 and keys == want, 'the runtime\'s stats line has the catalog\'s keys',
       'catalog: %s\nruntime: %s\nstderr: %s' % (' '.join(want), ' '.join(keys), got.stderr[-800:]))
    return done()


if __name__ == '__main__':
    sys.exit(main(sys.argv))
