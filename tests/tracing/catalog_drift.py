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
#      wsr_main with WSRDEBUG=stats=1);
#   6. the hand-written "Who emits what" table of docs/tracepoints.md names
#      every event once (a new event needs its row);
#   7. the generator refuses broken catalogs (BAD), with a message.
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
           want.stderr + got.stderr +
           diff(want.stdout, got.stdout, 'catalog.toml', 'built ' + what))

    want = run([py, gen, toml, 'expect', 'stats']).stdout.split()
    got = subprocess.run([dump, 'stats'], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=dict(os.environ, WSRMAXPROCS='1'))
    line = next((ln for ln in got.stderr.splitlines() if ln.startswith('wsr stats:')), '')
    keys = re.findall(r' (\w+)=\d+', line)
    ok(got.returncode == 0 and keys == want, 'the runtime\'s stats line has the catalog\'s keys',
       'catalog: %s\nruntime: %s\nstderr: %s' % (' '.join(want), ' '.join(keys), got.stderr[-800:]))
    who = who_emits(os.path.join(root, 'docs', 'tracepoints.md'))
    names = [ln.split()[1] for ln in run([py, gen, toml, 'expect', 'analyzer']).stdout.splitlines()
             if ln.startswith('event ')]
    ok(sorted(who) == sorted(names),
       'docs/tracepoints.md\'s "Who emits what" names every event once',
       'missing: %s\nextra or twice: %s' % (sorted(set(names) - set(who)),
                                           sorted(set(n for n in who if who.count(n) > 1 or
                                                      n not in names))))
    refusals(py, gen, toml)
    return done()


def who_emits(path):
    """The events named in the first column of the "| event | p | m |" table (hand-written)."""
    out, inside = [], False
    for line in open(path, encoding='utf-8'):
        if line.startswith('| event | p | m |'):
            inside = True
            continue
        if inside and not line.startswith('|'):
            break
        if inside and not line.startswith('|---'):
            out += re.findall(r'`(\w+)`', line.split('|')[1])
    return out


# (what, old text of catalog.toml, new text): catalogs the generator must refuse.
BAD = [
    ('an event defined twice', 'name = "steal_scan"', 'name = "steal"'),
    ('two fields in one column', 'name = "probed"\ntype = "uint32"\ncol = "a2"',
     'name = "probed"\ntype = "uint32"\ncol = "a1"'),
    ('a class whose events differ', 'name = "found_work"\ntype = "uint8"\ncol = "a2"\n'
     'doc = "always 0"', 'name = "found_work"\ntype = "uint32"\ncol = "a2"\ndoc = "always 0"'),
    ('a field without a column', 'name = "held_ns"\ntype = "int64"\ncol = "a1"',
     'name = "held_ns"\ntype = "int64"'),
]


def refusals(py, gen, toml):
    """The generator's own checks: a broken catalog is an error, never a build."""
    text = open(toml, encoding='utf-8').read()
    with tempfile.TemporaryDirectory() as tmp:
        for what, old, new in BAD:
            if not ok(text.count(old) == 1, 'the catalog has the text to break (%s)' % what):
                continue
            case = tempfile.mkdtemp(dir=tmp)
            path = os.path.join(case, 'bad.toml')
            with open(path, 'w', encoding='utf-8') as f:
                f.write(text.replace(old, new))
            r = run([py, gen, path, 'headers', os.path.join(case, 'a.h'),
                     os.path.join(case, 'b.h')])
            ok(r.returncode == 1 and 'gen_catalog.py: ' in r.stderr and
               not os.path.exists(os.path.join(case, 'a.h')),
               'the generator refuses %s' % what, r.stdout + r.stderr)


if __name__ == '__main__':
    sys.exit(main(sys.argv))
