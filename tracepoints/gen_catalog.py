#!/usr/bin/env python3
# gen_catalog.py - everything that names a wsr event, from tracepoints/catalog.toml.
#
# usage: gen_catalog.py CATALOG headers OUT_CATALOG_H OUT_TP_EVENTS_H
#        gen_catalog.py CATALOG update SRCROOT   (rewrite the checked-in generated blocks)
#        gen_catalog.py CATALOG check SRCROOT    (exit 1 and a diff if any block differs)
#        gen_catalog.py CATALOG expect provider|analyzer|stats
#                      (what tests/tracing/catalog-dump must print; catalog_drift.py)
#
# Invariants:
#   - The output is a function of the catalog alone (no dates, no paths), so a
#     regenerated block is byte-identical to the checked-in one unless one of
#     the two was changed.
#   - A checked-in block is the text between a BEGIN and an END marker line
#     (BLOCKS below); the markers and everything outside them are left as
#     they are.
#   - Every ev_* view comes from VIEW_TEMPLATE, and every view selects its
#     events with EVENT_MATCH: how the views read `events` is written once.
# Concurrency: none (a build step; `update` rewrites files in place).
import difflib
import os
import sys
import tomllib

C_INT = {'int32': 'int32_t', 'int64': 'int64_t', 'uint8': 'uint8_t', 'uint32': 'uint32_t'}
COLS = ('g', 'a1', 'a2', 'a3')
GEN = 'tracepoints/gen_catalog.py from tracepoints/catalog.toml'


class CatalogError(Exception):
    pass


def need(d, keys, where):
    for k in keys:
        if k not in d:
            raise CatalogError('%s has no `%s`' % (where, k))


def load(path):
    """The catalog, checked: a dict with common, enum, stat and event lists."""
    with open(path, 'rb') as f:
        cat = tomllib.load(f)
    need(cat, ('common', 'enum', 'stat', 'event'), 'the catalog')
    for f in cat['common']:
        need(f, ('name', 'type', 'col'), 'a common field')
    for en in cat['enum']:
        need(en, ('name', 'values', 'doc'), 'an enum')
    for st in cat['stat']:
        need(st, ('name', 'doc'), 'a stat')
    for ev in cat['event']:
        need(ev, ('name', 'when'), 'an event')
        for f in ev.get('field', []):
            need(f, ('name', 'type', 'col'), 'event %s: a field' % ev['name'])
    enums = {e['name']: e for e in cat['enum']}
    names, classes, json_events = set(), {}, []
    for ev in cat['event']:
        name = ev['name']
        if name in names:
            raise CatalogError('event %s defined twice' % name)
        names.add(name)
        ev.setdefault('field', [])
        used = {}
        for f in ev['field']:
            t = f['type']
            if t not in C_INT and t not in ('string', 'enum', 'sequence'):
                raise CatalogError('%s.%s: unknown type %s' % (name, f['name'], t))
            if t == 'enum' and f.get('enum') not in enums:
                raise CatalogError('%s.%s: unknown enum %s' % (name, f['name'], f.get('enum')))
            if t == 'sequence' and (f.get('elem') not in C_INT or 'length' not in f):
                raise CatalogError('%s.%s: a sequence needs elem and length' % (name, f['name']))
            col = f['col']
            if col in COLS or col == 'extra':
                if col in used:
                    raise CatalogError('%s: %s and %s both in %s' %
                                       (name, used[col], f['name'], col))
                used[col] = f['name']
                if col == 'extra' and t != 'string':
                    raise CatalogError('%s.%s: only a string goes to extra' % (name, f['name']))
                if col in COLS and t in ('string', 'sequence'):
                    raise CatalogError('%s.%s: %s holds integers' % (name, f['name'], col))
            elif not col.startswith('$.'):
                raise CatalogError('%s.%s: unknown col %s' % (name, f['name'], col))
        if any(f['col'].startswith('$.') for f in ev['field']):
            if 'extra' in used:
                raise CatalogError('%s: JSON fields and a string both in extra' % name)
            json_events.append(name)
        if 'args' not in ev and any(f['type'] == 'sequence' or src(f) != f['name']
                                    for f in ev['field']):
            raise CatalogError('%s: a sequence or a `src` needs the event\'s `args`' % name)
        if 'class' in ev:
            sig = [(f['name'], f['type'], f.get('elem'), f.get('enum'), src(f))
                   for f in ev['field']]
            if classes.setdefault(ev['class'], sig) != sig:
                raise CatalogError('%s: not the fields of class %s' % (name, ev['class']))
    if len(json_events) > 1:
        raise CatalogError('JSON fields in %s: only one event may have them' % json_events)
    for st in cat['stat']:
        if not st.get('last') and st.get('after') not in names:
            raise CatalogError('stat %s: no event %s' % (st['name'], st.get('after')))
    return cat


def src(f):
    return f.get('src', f['name'])


def fields(cat, ev):
    """The event's trace layout: the common fields, then its own."""
    return cat['common'] + ev['field']


def tp_args(cat, ev):
    """[(C type, name)] of the tracepoint's arguments."""
    out = [(C_INT[f['type']], f['name']) for f in cat['common'] if f.get('arg', True)]
    if 'args' in ev:
        return out + [tuple(a) for a in ev['args']]
    for f in ev['field']:
        out.append(('const char *' if f['type'] == 'string' else
                    C_INT['uint8'] if f['type'] == 'enum' else C_INT[f['type']], f['name']))
    return out


# ---- the headers (build time) ----

def lttng_field(f):
    t, s = f['type'], src(f)
    if t in C_INT:
        return 'lttng_ust_field_integer(%s, %s, %s)' % (C_INT[t], f['name'], s)
    if t == 'enum':
        return 'lttng_ust_field_enum(wsr, %s, uint8_t, %s, %s)' % (f['enum'], f['name'], s)
    if t == 'string':
        return 'lttng_ust_field_string(%s, %s)' % (f['name'], s)
    return 'lttng_ust_field_sequence(%s, %s, %s, uint32_t, %s)' % (C_INT[f['elem']], f['name'],
                                                                  s, f['length'])


def tp_events_h(cat):
    out = ['/* Generated by %s; do not edit.' % GEN,
           ' * The LTTng-UST definitions of the `wsr` provider, included by wsr_tp.h once',
           ' * per stage of lttng/tracepoint-event.h (hence no include guard). */', '']
    for en in cat['enum']:
        out.append('LTTNG_UST_TRACEPOINT_ENUM(wsr, %s,' % en['name'])
        out.append('\tLTTNG_UST_TP_ENUM_VALUES(')
        for i, v in enumerate(en['values']):
            out.append('\t\tlttng_ust_field_enum_value("%s", %d)' % (v, i))
        out.append('\t)')
        out.append(')')
        out.append('')
    done = set()
    for ev in cat['event']:
        if ev['name'] in done:
            continue
        args = 'LTTNG_UST_TP_ARGS(%s)' % ', '.join('%s, %s' % a for a in tp_args(cat, ev))
        body = (['\tLTTNG_UST_TP_FIELDS('] + ['\t\t' + lttng_field(f) for f in fields(cat, ev)] +
                ['\t)'])
        if 'class' not in ev:
            out.append('LTTNG_UST_TRACEPOINT_EVENT(wsr, %s,' % ev['name'])
            out += ['\t' + args + ','] + body + [')', '']
            done.add(ev['name'])
            continue
        # A class and all its instances, where its first event stands.
        out.append('LTTNG_UST_TRACEPOINT_EVENT_CLASS(wsr, %s,' % ev['class'])
        out += ['\t' + args + ','] + body + [')']
        for other in cat['event']:
            if other.get('class') == ev['class']:
                out.append('LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(wsr, %s, wsr, %s,' %
                           (ev['class'], other['name']))
                out.append('\t' + args + ')')
                done.add(other['name'])
        out.append('')
    return '\n'.join(out)


def xmacro(name, items, doc):
    lines = ['/* %s */' % doc, '#define %s(X) \\' % name]
    lines += ['\tX(%s) \\' % i for i in items]
    lines.append('\t/* end */')
    return '\n'.join(lines) + '\n'


def cstr(s):
    return '"%s"' % s if s is not None else 'NULL'


def columns(ev):
    """{col: field} for g, a1..a3, extra; [json fields] in order."""
    cols = {f['col']: f for f in ev['field'] if not f['col'].startswith('$.')}
    return cols, [f for f in ev['field'] if f['col'].startswith('$.')]


def catalog_h(cat):
    evs = cat['event']
    out = ['/* Generated by %s; do not edit.' % GEN,
           ' * X-macros of the wsr event catalog: each X(...) below is one entry, in',
           ' * catalog order (the order of enum wsr_ev). Expanded by runtime/trace.h,',
           ' * runtime/trace.c, runtime/debug.c, analyzer/rec.h and analyzer/catalog.c. */',
           '#ifndef WSR_CATALOG_H', '#define WSR_CATALOG_H', '']
    out.append(xmacro('WSR_CAT_EVENTS', ['%s, %s' % (e['name'], e['name'].upper()) for e in evs],
                      'X(name, NAME): every event.'))
    tp = []
    for e in evs:
        a = tp_args(cat, e)
        tp.append('%s, (%s), (%s)' % (e['name'], ', '.join('%s %s' % (t, n) if not t.endswith('*')
                                                           else '%s%s' % (t, n) for t, n in a),
                                      ', '.join(n for _, n in a)))
    out.append(xmacro('WSR_CAT_TP', tp, 'X(name, (parameters), (arguments)): the tracepoint call.'))
    col = []
    for e in evs:
        cols, js = columns(e)
        col.append('%s, %s, %s, %s, %s, %s, %s, %d' % (
            e['name'], e['name'].upper(),
            *(cstr(cols[c]['name'] if c in cols else None) for c in COLS),
            cstr(cols['extra']['name'] if 'extra' in cols else None), len(js)))
    out.append(xmacro('WSR_CAT_COLUMNS', col,
                      'X(name, NAME, g, a1, a2, a3, text, n_json): the payload fields the analyzer '
                      'stores in events.g, a1..a3, extra as text (NULL: none), and the number '
                      'of fields it stores as JSON in extra (WSR_CAT_JSON).'))
    js = [f for e in evs for f in columns(e)[1]]  # one event at most (load)
    out.append(xmacro('WSR_CAT_JSON', ['%s, %d' % (f['name'], 1 if f.get('clock') else 0)
                                       for f in js],
                      'X(field, clock): the fields of the one event with n_json > 0, stored as '
                      'a JSON object in extra, in order; clock: a trace-clock value (ns from '
                      'origin).'))
    out.append('#define WSR_CAT_JSON_COUNT %d\n' % len(js))
    out.append(xmacro('WSR_CAT_ENUMS', ['%s, %s' % (en['name'], en['name'].upper())
                                        for en in cat['enum']], 'X(name, NAME): the enumerations.'))
    for en in cat['enum']:
        out.append(xmacro('WSR_CAT_ENUM_' + en['name'].upper(),
                          ['%s, %s, %d' % (v.upper(), v, i) for i, v in enumerate(en['values'])],
                          'X(NAME, label, value): the enumerators of %s.' % en['name']))
    extra = [s['name'] for s in cat['stat'] if not s.get('last')]
    out.append(xmacro('WSR_CAT_STAT_EXTRA', extra,
                      'X(key): the per-thread stats counters that are not event counts.'))
    out.append(xmacro('WSR_CAT_STAT_ORDER', stat_order(cat, last=False),
                      'X(key): the counters in the order of the `wsr stats:` line.'))
    out.append(xmacro('WSR_CAT_STAT_LAST', [s['name'] for s in cat['stat'] if s.get('last')],
                      'X(key): the keys printed at the end of the line, from wsr__KEY.'))
    out.append('#endif')
    return '\n'.join(out) + '\n'


def stat_order(cat, last=True):
    out = []
    for e in cat['event']:
        out.append(e['name'])
        out += [s['name'] for s in cat['stat'] if s.get('after') == e['name']]
    if last:
        out += [s['name'] for s in cat['stat'] if s.get('last')]
    return out


# ---- the checked-in blocks ----

# The one template of the ev_* views (one view per event, or per `view` group).
VIEW_TEMPLATE = '''CREATE VIEW ev_{view} AS
SELECT id, ts, ts - (SELECT start_ts FROM trace_info) AS t, cpu, tid, vpid, p, m{columns}
FROM events WHERE {match};
'''


def EVENT_MATCH(names):
    """The condition that selects the events NAMES in `events`."""
    if len(names) == 1:
        return "name = '%s'" % names[0]
    return 'name IN (%s)' % ', '.join("'%s'" % n for n in names)


def view_column(f):
    c = f['col']
    if c.startswith('$.'):
        expr = "json_extract(extra, '%s')" % c
    elif f['type'] == 'enum':
        expr = '(SELECT name FROM enum_%s WHERE id = %s)' % (f['enum'], c)
    else:
        expr = c
    return '%s AS %s' % (expr, f['name'])


def views(cat):
    groups = {}
    for e in cat['event']:
        groups.setdefault(e.get('view', e['name']), []).append(e)
    out = []
    for view, evs in groups.items():
        names = [e['name'] for e in evs]
        has_g = any(f['col'] == 'g' for e in evs for f in e['field'])
        payload, seen = [], {}
        for e in evs:
            for f in e['field']:
                if f['col'] == 'g':
                    continue
                if f['col'] in seen:
                    if seen[f['col']] != f['name']:
                        raise CatalogError('view ev_%s: %s and %s both in %s' %
                                           (view, seen[f['col']], f['name'], f['col']))
                    continue
                seen[f['col']] = f['name']
                payload.append(f)
        payload.sort(key=lambda f: (0, COLS.index(f['col'])) if f['col'] in COLS else
                     (1, 0))
        cols = (', g' if has_g else '') + (', name' if len(evs) > 1 else '')
        if payload:
            sep = ',\n  ' if any(f['col'].startswith('$.') for f in payload) else ', '
            cols += ',\n  ' + sep.join(view_column(f) for f in payload)
        out.append(VIEW_TEMPLATE.format(view=view, columns=cols, match=EVENT_MATCH(names)))
    return '\n'.join(out)


def wrap_rows(rows, indent='  ', width=100):
    """SQL value rows, as many per line as fit in WIDTH."""
    lines, cur = [], ''
    for r in rows:
        if cur and len(indent) + len(cur) + len(r) + 2 > width:
            lines.append(indent + cur + ',')
            cur = ''
        cur = cur + ', ' + r if cur else r
    lines.append(indent + cur)
    return '\n'.join(lines)


def event_fields(cat):
    lines = []
    for e in cat['event']:
        rows = ["('%s', '%s', '%s')" % (e['name'], f['name'], f['col'])
                for f in e['field'] if f['col'] != 'g']
        if rows:
            lines.append(wrap_rows(rows))
    return 'INSERT INTO event_fields (name, field, col) VALUES\n' + ',\n'.join(lines) + ';\n'


def enum_tables(cat):
    out = []
    for en in cat['enum']:
        out.append('CREATE TABLE enum_%s (id INTEGER PRIMARY KEY, name TEXT NOT NULL);' %
                   en['name'])
        out.append('INSERT INTO enum_%s VALUES' % en['name'])
        out.append(wrap_rows(["(%d, '%s')" % (i, v) for i, v in enumerate(en['values'])]) + ';')
    return '\n'.join(out) + '\n'


def field_doc(f):
    t = f['type']
    if t == 'enum':
        ty = 'enum `%s`' % f['enum']
    elif t == 'sequence':
        ty = 'sequence of %s' % f['elem']
    else:
        ty = t
    return '%s (%s%s)' % (f['name'], ty, ': ' + f['doc'] if 'doc' in f else '')


def doc_events(cat):
    out = ['| event | fields after %s | emitted when (by whom) |' %
           ', '.join(f['name'] for f in cat['common']), '|---|---|---|']
    for e in cat['event']:
        out.append('| `%s` | %s | %s |' % (e['name'], ', '.join(field_doc(f) for f in e['field']),
                                           e['when']))
    return '\n'.join(out) + '\n'


def doc_enums(cat):
    out = []
    for en in cat['enum']:
        out.append('`%s` (uint8): %s.' % (en['name'], ', '.join('%s %d' % (v, i) for i, v in
                                                               enumerate(en['values']))))
        out.append(en['doc'])
        out.append('')
    return '\n'.join(out[:-1]) + '\n'


def doc_stats(cat):
    keys = ' '.join('%s=%s' % (k, next((e.get('stats_example', 'N') for e in cat['event']
                                        if e['name'] == k), 'N'))
                    for k in stat_order(cat))
    docs = ['`%s` %s' % (s['name'], s['doc']) for s in cat['stat']]
    return ('```\nwsr stats: %s\n```\n\nEach `EVENT=N` counts the events of that name emitted in '
            'the run;\n%s, and %s.\n' % (keys, ', '.join(docs[:-1]), docs[-1]))


def doc_payloads(cat):
    out = ['| event | a1 | a2 | a3 | extra |', '|---|---|---|---|---|']
    done = set()
    for e in cat['event']:
        if e['name'] in done:
            continue
        group = [o for o in cat['event'] if 'class' in e and o.get('class') == e['class']] or [e]
        done.update(o['name'] for o in group)
        cols, js = columns(e)
        if not js and not any(c in cols for c in ('a1', 'a2', 'a3', 'extra')):
            continue
        cells = []
        for c in ('a1', 'a2', 'a3', 'extra'):
            f = cols.get(c)
            cells.append('' if f is None else
                         f['name'] + (' (enum)' if f['type'] == 'enum' else ''))
        if js:
            cells[3] = 'JSON: ' + ', '.join(f['name'] for f in js)
        out.append('| %s |' % ', '.join(o['name'] for o in group) +
                   ''.join(' %s |' % c if c else ' |' for c in cells))
    out.append('| any event outside the catalog | | | | JSON of its whole payload |')
    return '\n'.join(out) + '\n'


# (file, block name, comment syntax, generator)
BLOCKS = [
    ('analyzer/sql/schema.sql', 'event_fields', 'sql', event_fields),
    ('analyzer/sql/schema.sql', 'enums', 'sql', enum_tables),
    ('analyzer/sql/views.sql', 'ev_views', 'sql', views),
    ('docs/tracepoints.md', 'events', 'md', doc_events),
    ('docs/tracepoints.md', 'enums', 'md', doc_enums),
    ('docs/tracepoints.md', 'stats', 'md', doc_stats),
    ('docs/schema.md', 'payloads', 'md', doc_payloads),
]


def markers(name, syntax):
    begin = 'BEGIN generated:%s by %s (ninja -C build catalog-update); do not edit' % (name, GEN)
    end = 'END generated:%s' % name
    if syntax == 'sql':
        return '-- ' + begin + '\n', '-- ' + end + '\n'
    return '<!-- ' + begin + ' -->\n', '<!-- ' + end + ' -->\n'


def replace_block(text, path, name, syntax, body):
    begin, end = markers(name, syntax)
    b = text.find(begin)
    e = text.find(end, b + 1) if b >= 0 else -1
    if b < 0 or e < 0 or text.count(begin) != 1:
        raise CatalogError('%s: no single block %s (its marker lines: %r ... %r)' %
                           (path, name, begin.strip(), end.strip()))
    return text[:b + len(begin)] + body + text[e:]


def regenerate(cat, root):
    """{path: (old text, new text)} for every file with generated blocks."""
    out = {}
    for path, name, syntax, gen in BLOCKS:
        full = os.path.join(root, path)
        if path not in out:
            with open(full, encoding='utf-8') as f:
                text = f.read()
            out[path] = (text, text)
        old, cur = out[path]
        out[path] = (old, replace_block(cur, path, name, syntax, gen(cat)))
    return out


# ---- what the built provider and analyzer must say (tests/tracing/catalog-dump.c) ----

def type_name(f):
    t = f['type']
    if t == 'enum':
        return 'enum:wsr_%s:uint8' % f['enum']  # LTTng-UST prefixes the provider
    if t == 'sequence':
        return 'sequence:%s:uint32' % f['elem']
    return t


def expect(cat, what):
    out = []
    if what == 'provider':
        for en in cat['enum']:
            out.append('enum wsr_%s %s' % (en['name'], ' '.join('%s=%d' % (v, i) for i, v in
                                                            enumerate(en['values']))))
        done = set()
        for e in cat['event']:  # the definition order (classes together)
            group = [o for o in cat['event'] if 'class' in e and o.get('class') == e['class']]
            for o in group or [e]:
                if o['name'] in done:
                    continue
                done.add(o['name'])
                out.append('event %s %s' % (o['name'], ' '.join(
                    '%s:%s' % (f['name'], type_name(f)) for f in fields(cat, o))))
    elif what == 'analyzer':
        for en in cat['enum']:
            out.append('enum %s %s' % (en['name'], ' '.join(en['values'])))
        for e in cat['event']:
            cols, js = columns(e)
            out.append('event %s %s' % (e['name'], ' '.join(
                '%s=%s' % (c, cols[c]['name'] if c in cols else '-') for c in COLS + ('extra',))) +
                ''.join(' $.%s%s' % (f['name'], ':clock' if f.get('clock') else '') for f in js))
        src_enum = next(en for en in cat['enum'] if en['name'] == 'g_source')
        out.append('latency_sources %s other' % ' '.join(src_enum['values']))
    elif what == 'stats':
        out.append(' '.join(stat_order(cat)))
    else:
        raise CatalogError('expect: provider, analyzer or stats, not ' + what)
    return '\n'.join(out) + '\n'


def write_if_changed(path, text):
    try:
        with open(path, encoding='utf-8') as f:
            if f.read() == text:
                return
    except FileNotFoundError:
        pass
    with open(path, 'w', encoding='utf-8') as f:
        f.write(text)


def main(argv):
    if len(argv) < 3:
        print('usage: gen_catalog.py CATALOG headers|update|check|expect ... (see its head)',
              file=sys.stderr)
        return 2
    try:
        cat = load(argv[1])
        cmd = argv[2]
        if cmd == 'headers' and len(argv) == 5:
            write_if_changed(argv[3], catalog_h(cat))
            write_if_changed(argv[4], tp_events_h(cat))
        elif cmd in ('update', 'check') and len(argv) == 4:
            bad = 0
            for path, (old, new) in regenerate(cat, argv[3]).items():
                if old == new:
                    continue
                if cmd == 'update':
                    write_if_changed(os.path.join(argv[3], path), new)
                    print('updated ' + path)
                    continue
                bad += 1
                sys.stdout.writelines(difflib.unified_diff(
                    old.splitlines(True), new.splitlines(True), 'checked-in/' + path,
                    'generated/' + path))
                print('FAIL: %s differs from what %s generates (run `ninja -C build '
                      'catalog-update`, or edit the catalog, not the copy)' % (path, argv[1]))
            return 1 if bad else 0
        elif cmd == 'expect' and len(argv) == 4:
            sys.stdout.write(expect(cat, argv[3]))
        else:
            print('gen_catalog.py: bad arguments %s' % argv[2:], file=sys.stderr)
            return 2
    except (CatalogError, tomllib.TOMLDecodeError) as e:
        print('gen_catalog.py: %s: %s' % (argv[1], e), file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
