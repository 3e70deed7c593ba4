#!/usr/bin/env python3
# check_catalog.py - the tracepoint catalog page must match the provider header.
#
# Usage: check_catalog.py tracepoints/wsr_tp.h docs/tracepoints.md
#
# Checks, each failure printed (exit 1 if any):
#   - the same events in the header and in the page's table;
#   - per event, p, m, vtid and vpid first (int32 each), then the page's field
#     names in the header's order, and the type wherever the page states one
#     (int32, uint8, ...);
#   - the g_source and g_reason enumerations: same labels, same values;
#   - the `wsr stats:` line on the page has a key for every event.
import re
import sys

# The fields every event starts with; the page's table lists the ones after.
COMMON = ['p', 'm', 'vtid', 'vpid']
NCOMMON = len(COMMON)

TYPES = {'int32': 'int32_t', 'int64': 'int64_t', 'uint8': 'uint8_t', 'uint32': 'uint32_t',
         'string': 'string'}


def split_top(s, sep=','):
    """Splits S on SEP outside parentheses."""
    out, depth, cur = [], 0, ''
    for ch in s:
        if ch == '(':
            depth += 1
        elif ch == ')':
            depth -= 1
        if ch == sep and depth == 0:
            out.append(cur)
            cur = ''
        else:
            cur += ch
    out.append(cur)
    return [x.strip() for x in out if x.strip()]


def macro_calls(text, name):
    """Yields the argument text of each NAME(...) call (balanced parentheses)."""
    for m in re.finditer(r'\b' + name + r'\s*\(', text):
        depth, i = 1, m.end()
        while depth and i < len(text):
            depth += {'(': 1, ')': -1}.get(text[i], 0)
            i += 1
        yield text[m.end():i - 1]


def field_list(fields_text):
    """[(name, type)] from a LTTNG_UST_TP_FIELDS(...) body."""
    out = []
    for m in re.finditer(r'lttng_ust_field_(\w+)\s*\(', fields_text):
        kind = m.group(1)
        args = split_top(next(macro_calls(fields_text[m.start():], 'lttng_ust_field_' + kind)))
        if kind in ('integer', 'integer_hex'):
            out.append((args[1], args[0]))
        elif kind == 'string':
            out.append((args[0], 'string'))
        elif kind == 'enum':
            out.append((args[3], args[2]))
        elif kind in ('sequence', 'array'):
            out.append((args[1], 'sequence'))
        else:
            out.append((args[1] if len(args) > 1 else args[0], kind))
    return out


def parse_header(path):
    text = open(path, encoding='utf-8').read()
    text = re.sub(r'/\*.*?\*/', '', text, flags=re.S)
    classes, events, enums = {}, {}, {}
    for body in macro_calls(text, 'LTTNG_UST_TRACEPOINT_EVENT_CLASS'):
        args = split_top(body)
        classes[args[1]] = field_list(args[3])
    for body in macro_calls(text, 'LTTNG_UST_TRACEPOINT_EVENT'):
        args = split_top(body)
        events[args[1]] = field_list(args[3])
    for body in macro_calls(text, 'LTTNG_UST_TRACEPOINT_EVENT_INSTANCE'):
        args = split_top(body)
        events[args[3]] = classes[args[1]]
    for body in macro_calls(text, 'LTTNG_UST_TRACEPOINT_ENUM'):
        args = split_top(body)
        enums[args[1]] = [(l, int(v)) for l, v in
                          re.findall(r'lttng_ust_field_enum_value\(\s*"(\w+)"\s*,\s*(\d+)', body)]
    return events, enums


def parse_page(path):
    text = open(path, encoding='utf-8').read()
    events, enums = {}, {}
    # The catalog is the table whose header is "| event | fields after ...";
    # other tables on the page (who emits what) are not read.
    in_catalog = False
    for line in text.splitlines():
        if line.startswith('| event |'):
            in_catalog = 'fields after' in line
            continue
        if not line.startswith('|'):
            in_catalog = in_catalog and line.strip() == ''
            continue
        m = re.match(r'\|\s*`(\w+)`\s*\|([^|]*)\|', line) if in_catalog else None
        if not m:
            continue
        fields = []
        for item in split_top(m.group(2)):
            fm = re.match(r'(\w+)(?:\s*\((\w+))?', item)
            fields.append((fm.group(1), fm.group(2)))
        events[m.group(1)] = fields
    for m in re.finditer(r"`(\w+)` \(uint8\): ((?:\w+ \d+(?:,\s+)?)+)\.", text):
        enums[m.group(1)] = [(l, int(v)) for l, v in re.findall(r'(\w+) (\d+)', m.group(2))]
    stats = re.search(r'^wsr stats: (.*)$', text, flags=re.M)
    stats_keys = re.findall(r'(\w+)=N', stats.group(1)) if stats else []
    stats_keys += re.findall(r'(\w+)=1', stats.group(1)) if stats else []
    return events, enums, stats_keys


def main(argv):
    if len(argv) != 3:
        print('usage: check_catalog.py wsr_tp.h tracepoints.md')
        return 2
    h_events, h_enums = parse_header(argv[1])
    p_events, p_enums, stats_keys = parse_page(argv[2])
    errors = []
    for ev in sorted(set(h_events) - set(p_events)):
        errors.append('event %s is in the header but not on the page' % ev)
    for ev in sorted(set(p_events) - set(h_events)):
        errors.append('event %s is on the page but not in the header' % ev)
    for ev in sorted(set(h_events) & set(p_events)):
        hf = h_events[ev]
        if hf[:NCOMMON] != [(n, 'int32_t') for n in COMMON]:
            errors.append('%s: the header does not start with int32 %s' % (ev, ', int32 '.join(COMMON)))
        hnames = [n for n, _ in hf[NCOMMON:]]
        pnames = [n for n, _ in p_events[ev]]
        if hnames != pnames:
            errors.append('%s: header fields %s, page fields %s' % (ev, hnames, pnames))
            continue
        for (name, htype), (_, ptype) in zip(hf[NCOMMON:], p_events[ev]):
            if ptype in TYPES and TYPES[ptype] != htype:
                errors.append('%s.%s: header type %s, page says %s' % (ev, name, htype, ptype))
    for en in sorted(set(h_enums) | set(p_enums)):
        if h_enums.get(en) != p_enums.get(en):
            errors.append('enum %s: header %s, page %s' % (en, h_enums.get(en), p_enums.get(en)))
    for ev in sorted(h_events):
        if ev not in stats_keys:
            errors.append('the page\'s stats line has no key for %s' % ev)
    for e in errors:
        print('FAIL: ' + e)
    print('%d events, %d enums checked; %d problem(s)' % (len(h_events), len(h_enums), len(errors)))
    return 1 if errors else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
