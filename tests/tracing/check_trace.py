#!/usr/bin/env python3
# check_trace.py - checks a `wsr` LTTng trace against the runtime's own
# `WSRDEBUG=stats=1` counters and the sequence rules of docs/tracepoints.md.
#
# Usage: check_trace.py TRACE_DIR STATS_FILE [--vpid N] [--require EV,EV...]
#                       [--allow-discards]
#   STATS_FILE holds the program's stderr; its "wsr stats:" line is the truth.
#   --vpid: every event must come from that process (default: any one process).
#   --require: event kinds that must appear at least once.
#   --allow-discards: default-mode traces; then events + discarded == emitted
#                     is checked instead of exact per-kind equality, and the
#                     sequence rules are not (a discard leaves gaps).
#
# Checks (each failure is printed; exit 1 if any, 0 otherwise):
#   - babeltrace2 reads the trace; exactly one vpid appears.
#   - per-kind counts equal the stats line exactly, plus runqput_next (runqput
#     with next=1) and stolen (sum of steal.n).
#   - every g_run of a G follows an event that made it runnable since its last
#     g_run (g_create, runqput, globrunq_put or g_ready of that G); a G that
#     arrives in a batch (globrunq_get, steal) was queued by such an event too.
#   - per M: g_run/g_stop alternate on the same G; spin_start/spin_stop
#     alternate starting with spin_start; m_park/m_unpark alternate starting
#     with m_park.
#   - per P: p_idle/p_busy alternate starting with p_idle.
#   - the firing rules of the catalog: one init, first, with p = -1; each
#     g_create is followed on its thread by the runqput/globrunq_put of that
#     G (a runq_spill may come between); runq_spill moves runq_size/2 + 1 Gs;
#     m_park has p = -1 and by_m = -1; spin_start has found_work = 0.
#   - between sysmon's retake of a P and its handoff no event names that P but
#     the spin_start and m_unpark of the M the handoff names; every handoff
#     follows the retake of its P.
import re
import subprocess
import sys
import tempfile
from collections import Counter

FIELD_RE = re.compile(r'(\w+) = (?:\( "\w+" : container = )?(-?\d+)')
NAME_RE = re.compile(r' wsr:(\w+): ')
EXTRA_KEYS = {'runqput_next', 'stolen', 'max_spinning'}
MAX_ERRORS = 20


class Checker:
    def __init__(self, quiet=False):
        self.errors = []
        self.quiet = quiet

    def fail(self, msg):
        if len(self.errors) < MAX_ERRORS and not self.quiet:
            print('FAIL: ' + msg)
        self.errors.append(msg)


def parse_stats(path):
    with open(path, encoding='utf-8', errors='replace') as f:
        for line in f:
            if line.startswith('wsr stats:'):
                return {k: int(v) for k, v in re.findall(r'(\w+)=(\d+)', line)}
    return None


def read_trace(trace_dir):
    """Yields (name, fields dict) in trace order; sets read_trace.stderr at the end.

    babeltrace2's stderr (one warning per discard) goes to a file, not a pipe:
    a pipe read only after stdout would fill and deadlock both processes."""
    with tempfile.TemporaryFile(mode='w+') as errf:
        proc = subprocess.Popen(['babeltrace2', '--no-delta', trace_dir], stdout=subprocess.PIPE,
                                stderr=errf, text=True, bufsize=1 << 20)
        for line in proc.stdout:
            m = NAME_RE.search(line)
            if m is None:
                continue
            yield m.group(1), {k: int(v) for k, v in FIELD_RE.findall(line, m.end())}
        rc = proc.wait()
        errf.seek(0)
        err = errf.read()
    if rc != 0:
        raise RuntimeError('babeltrace2 failed: ' + err.strip()[-2000:])
    read_trace.stderr = err


class Sequences:
    """docs/tracepoints.md's sequence rules, fed one event at a time in trace order
    (a lossless trace: a discard leaves gaps). Failures go to the Checker."""

    def __init__(self, ck):
        self.ck = ck
        self.runqput_next = 0
        self.stolen = 0
        self.runnable = set()       # Gs made runnable since their last g_run
        self.running = {}           # m -> g currently running on it
        self.spinning = {}          # m -> bool
        self.parked = {}            # m -> bool
        self.pidle = {}             # p -> bool
        self.pending_create = {}    # vtid -> G whose g_create awaits its runqput/globrunq_put
        self.retaken = {}           # p -> the Ms named, since sysmon's retake of p, by spin_start / m_unpark
        self.runq_size = None
        self.index = 0

    def event(self, name, f):
        ck = self.ck
        m = f.get('m', -1)
        p = f.get('p', -1)
        g = f.get('g')
        tid = f.get('vtid')
        self.index += 1
        if tid in self.pending_create and name != 'runq_spill':
            want = self.pending_create.pop(tid)
            if name not in ('runqput', 'globrunq_put') or g != want:
                ck.fail('g_create of G %d is followed on its thread by %s (g=%s), not by '
                        'its runqput/globrunq_put' % (want, name, g))
        if p in self.retaken and name not in ('retake', 'handoff'):
            # Between sysmon's retake of a P and its handoff, the P is nobody's: only
            # the spin_start and m_unpark that sysmon emits for the M it hands it to.
            if name in ('spin_start', 'm_unpark'):
                self.retaken[p].add(m)
            else:
                ck.fail('%s of M %d names P %d between its retake and its handoff'
                        % (name, m, p))
        if name == 'init':
            self.runq_size = f['runq_size']
            if self.index != 1 or p != -1:
                ck.fail('init must be the first event, with p = -1 (event #%d, p = %d)'
                        % (self.index, p))
        elif name == 'g_create':
            self.pending_create[tid] = g
        elif name == 'runq_spill':
            if self.runq_size is not None and f['n'] != self.runq_size // 2 + 1:
                ck.fail('runq_spill moved %d Gs, not runq_size/2 + 1 = %d'
                        % (f['n'], self.runq_size // 2 + 1))
        elif name == 'm_park' and (p != -1 or f['by_m'] != -1):
            ck.fail('m_park of M %d with p = %d, by_m = %d (both must be -1)'
                    % (m, p, f['by_m']))
        elif name == 'spin_start' and f['found_work'] != 0:
            ck.fail('spin_start of M %d with found_work = %d' % (m, f['found_work']))
        elif name == 'retake':
            if p in self.retaken:
                ck.fail('retake of P %d again before its handoff' % p)
            self.retaken[p] = set()
        elif name == 'handoff':
            named = self.retaken.pop(p, None)
            if named is None:
                ck.fail('handoff of P %d with no retake of it before' % p)
            elif named - {f['to_m']}:
                ck.fail('handoff of P %d to M %d after events of M %s on it'
                        % (p, f['to_m'], sorted(named - {f['to_m']})))
        if name in ('g_create', 'runqput', 'globrunq_put', 'g_ready'):
            self.runnable.add(g)
            if name == 'runqput':
                self.runqput_next += f['next']
        elif name == 'steal':
            self.stolen += f['n']
        elif name == 'g_run':
            if g not in self.runnable:
                ck.fail('g_run of G %d on M %d with no g_create/runqput/globrunq_put/'
                        'g_ready of it since its previous run' % (g, m))
            self.runnable.discard(g)
            if self.running.get(m) is not None:
                ck.fail('g_run of G %d on M %d while G %d still runs there'
                        % (g, m, self.running[m]))
            self.running[m] = g
        elif name == 'g_stop':
            if self.running.get(m) != g:
                ck.fail('g_stop of G %d on M %d, which runs %s' % (g, m, self.running.get(m)))
            self.running[m] = None
        elif name in ('spin_start', 'spin_stop'):
            want = name == 'spin_stop'
            if self.spinning.get(m, False) != want:
                ck.fail('%s on M %d out of turn (spin_start/spin_stop must alternate)'
                        % (name, m))
            self.spinning[m] = not want
        elif name in ('m_park', 'm_unpark'):
            want = name == 'm_unpark'
            if self.parked.get(m, False) != want:
                ck.fail('%s on M %d out of turn (m_park/m_unpark must alternate)' % (name, m))
            self.parked[m] = not want
        elif name in ('p_idle', 'p_busy'):
            want = name == 'p_busy'
            if self.pidle.get(p, False) != want:
                ck.fail('%s of P %d out of turn (p_idle/p_busy must alternate)' % (name, p))
            self.pidle[p] = not want


def main(argv):
    args = argv[1:]
    opts = {'vpid': None, 'require': [], 'allow_discards': False}
    pos = []
    i = 0
    while i < len(args):
        a = args[i]
        if a == '--vpid':
            opts['vpid'] = int(args[i + 1])
            i += 2
        elif a == '--require':
            opts['require'] = [x for x in args[i + 1].split(',') if x]
            i += 2
        elif a == '--allow-discards':
            opts['allow_discards'] = True
            i += 1
        else:
            pos.append(a)
            i += 1
    if len(pos) != 2:
        print(__doc__ if __doc__ else 'usage: check_trace.py TRACE_DIR STATS_FILE ...')
        return 2
    trace_dir, stats_file = pos
    ck = Checker()
    stats = parse_stats(stats_file)
    if stats is None:
        print('FAIL: no "wsr stats:" line in ' + stats_file)
        return 1

    counts = Counter()
    vpids = Counter()
    # A trace with discarded events has gaps: sequences are checked only without.
    seq = None if opts['allow_discards'] else Sequences(ck)
    try:
        for name, f in read_trace(trace_dir):
            counts[name] += 1
            vpids[f.get('vpid')] += 1
            if seq is not None:
                seq.event(name, f)
    except RuntimeError as e:
        print('FAIL: ' + str(e))
        return 1
    bt_err = getattr(read_trace, 'stderr', '')
    # Summed modulo 2^64, as the tracer's counters are: with several threads on one
    # per-CPU buffer, a packet can close with a smaller cumulative events_discarded
    # than the one before it, and babeltrace2 then reports a wrapped (huge) count
    # that the next interval makes up for.
    discarded = sum(int(n) for n in re.findall(r'Tracer discarded (\d+) events? ', bt_err))
    discarded %= 1 << 64
    lost_packets = sum(int(n) for n in re.findall(r'Tracer lost (\d+) (?:trace )?packets? ', bt_err))
    discard_warnings = bt_err.count('WARNING: Tracer')

    total = sum(counts.values())
    print('trace: %d events, %d kinds, vpids %s, discarded %d events and %d packets '
          '(babeltrace2 warnings: %d)'
          % (total, len(counts), dict(vpids), discarded, lost_packets, discard_warnings))
    if total == 0:
        ck.fail('the trace holds no event')
    if seq is not None and counts['init'] != 1:
        ck.fail('%d init events, expected exactly 1' % counts['init'])
    if opts['vpid'] is not None:
        if set(vpids) != {opts['vpid']}:
            ck.fail('events from vpids %s, expected only %d' % (dict(vpids), opts['vpid']))
    elif len(vpids) != 1:
        ck.fail('events from %d processes: %s' % (len(vpids), dict(vpids)))
    for ev in opts['require']:
        if counts[ev] == 0:
            ck.fail('no %s event, although the workload exercises it' % ev)

    observed = dict(counts)
    observed['runqput_next'] = seq.runqput_next if seq else 0
    observed['stolen'] = seq.stolen if seq else 0
    if opts['allow_discards']:
        emitted = sum(v for k, v in stats.items() if k not in EXTRA_KEYS)
        print('emitted %d (stats line), in trace %d, discarded %d' % (emitted, total, discarded))
        if lost_packets == 0 and total + discarded != emitted:
            ck.fail('events in trace (%d) + discarded (%d) != emitted (%d)'
                    % (total, discarded, emitted))
        elif lost_packets > 0 and total + discarded > emitted:
            ck.fail('events in trace (%d) + discarded (%d) > emitted (%d)'
                    % (total, discarded, emitted))
    else:
        if discard_warnings:
            ck.fail('babeltrace2 reports discarded events or packets in a lossless trace')
        for key in sorted(set(stats) | set(observed)):
            if key == 'max_spinning':
                continue
            want = stats.get(key)
            got = observed.get(key, 0)
            if want is None:
                ck.fail('event %s (%d in trace) has no key in the stats line' % (key, got))
            elif want != got:
                ck.fail('%s: trace has %d, stats line says %d' % (key, got, want))
        print('per-kind counts: ' + ' '.join('%s=%d' % kv for kv in sorted(observed.items())))

    if ck.errors:
        print('%d check(s) failed' % len(ck.errors))
        return 1
    print('all checks passed')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
