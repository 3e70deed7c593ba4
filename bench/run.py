#!/usr/bin/env python3
# run.py - the issue 8 benchmark driver behind bench/run.sh (docs/performance.md).
#
# Builds two release trees of wsr outside the source tree (tracing compiled in, and
# -Dtracing=disabled), the Go binary and the LLVM OpenMP programs (bench/meson.build),
# then measures, each section with its implementations run alternately in rotating
# order (so load on a shared machine falls on every side alike):
#   1. throughput of every workload at 1 and 2 Ps: wsr (untraced build), Go, OpenMP;
#   2. tracing cost at 2 Ps on spawn_tree, skewed and pingpong: compiled out,
#      compiled in with no session, under `wsr run` (default mode), Go, Go -trace;
#   3. peak RSS (/usr/bin/time -f %M) of spawn_flat at 1 and 2 Ps.
# Prints medians with their spread, wsr/peer ratios and markdown tables; writes
# the raw result lines and the tables under the build directory.
#
# Invariants: a run whose `check` differs from the other runs and implementations of
# the same workload and size fails the whole command (exit 1) after the tables; no
# wall-clock threshold is ever asserted. Exit 0 otherwise, 2 on usage errors.
# Concurrency: runs one benchmark process at a time.

import argparse
import datetime
import json
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

WORKLOADS = ['spawn_tree', 'spawn_flat', 'pingpong', 'skewed', 'sieve', 'yield', 'sleep_timers']
OMP_WORKLOADS = {'spawn_tree', 'spawn_flat', 'skewed'}
TRACE_WORKLOADS = ['spawn_tree', 'skewed', 'pingpong']

# Arguments as in each program's usage line (the defaults are the sizes).
FULL = {
    'spawn_tree': ['29'],
    'spawn_flat': ['1000000', '3'],
    'pingpong': ['6000000'],
    'skewed': ['200000', '512', '4'],
    'sieve': ['3000'],
    'yield': ['1000000', '20'],
    'sleep_timers': ['10000', '20', '1000000'],
}
QUICK = {
    'spawn_tree': ['22'],
    'spawn_flat': ['200000', '3'],
    'pingpong': ['600000'],
    'skewed': ['20000', '512', '4'],
    'sieve': ['800'],
    'yield': ['200000', '5'],
    'sleep_timers': ['2000', '10', '1000000'],
}
PROCS_ENV = {'wsr': 'WSRMAXPROCS', 'go': 'GOMAXPROCS', 'omp': 'OMP_NUM_THREADS'}
TIMEOUT = 900


class BenchError(Exception):
    pass


class Failed(list):
    # A cell whose program failed: empty, but tells the tables to say so.
    pass


FAILED = Failed()


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, **kw)


def out_of(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=60).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return '?'


def export_commit(root, rev):
    # A clean copy of one commit (git archive), so that the tables name exactly what ran.
    full = out_of(['git', '-C', SRC, 'rev-parse', '--verify', rev + '^{commit}'])
    if not re.fullmatch(r'[0-9a-f]{40}', full):
        raise BenchError(f'--commit {rev}: not a commit of {SRC}')
    top = os.path.join(root, 'commit-' + full[:12])
    src = os.path.join(top, 'src')
    if not os.path.exists(os.path.join(src, 'meson.build')):
        os.makedirs(src, exist_ok=True)
        log(f'== git archive {full[:12]} -> {src}')
        sh(f'git -C "{SRC}" archive {full} | tar -x -C "{src}"', shell=True)
    return src, top, full[:12]


def build(root, no_build, src=SRC):
    trees = {'traced': ['-Dtracing=enabled'], 'notrace': ['-Dtracing=disabled']}
    for name, opts in trees.items():
        d = os.path.join(root, name)
        if no_build:
            continue
        if not os.path.exists(os.path.join(d, 'build.ninja')):
            log(f'== meson setup {d}')
            sh(['meson', 'setup', d, src, '--buildtype=release', '-Dtests=disabled',
                '-Dviewer=disabled'] + opts, stdout=subprocess.DEVNULL)
        log(f'== ninja -C {d}')
        # Others' work in progress can break a build for a moment: retry once, then show it.
        if subprocess.run(['ninja', '-C', d], stdout=subprocess.DEVNULL).returncode != 0:
            sh(['ninja', '-C', d])
    return {name: os.path.join(root, name) for name in trees}


def parse_line(text):
    for line in text.splitlines():
        if line.startswith('name='):
            return dict(kv.split('=', 1) for kv in line.split())
    return None


def run_once(cmd, env_extra, label):
    env = dict(os.environ)
    for k in ('WSRDEBUG', 'GODEBUG', 'WSRMAXPROCS', 'GOMAXPROCS', 'OMP_NUM_THREADS'):
        env.pop(k, None)
    env.update(env_extra)
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        raise BenchError(f'{label}: timed out after {TIMEOUT} s: {" ".join(cmd)}')
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = parse_line(p.stdout)
    if p.returncode != 0 or r is None:
        raise BenchError(f'{label}: exit {p.returncode}: {" ".join(cmd)}\n{p.stdout}{p.stderr}')
    # CPU time (user + system) of the whole process, start-up included: beside
    # `secs` it shows whether a difference is work done or time waited.
    r['cpu_secs'] = f'{ru1.ru_utime + ru1.ru_stime - ru0.ru_utime - ru0.ru_stime:.3f}'
    r['_stderr'] = p.stderr
    return r


class Runner:
    def __init__(self, trees, sizes, runs, outdir):
        self.trees, self.sizes, self.runs, self.outdir = trees, sizes, runs, outdir
        self.raw = open(os.path.join(outdir, 'raw.txt'), 'w')
        self.checks = {}
        self.failures = []
        self.errors = []
        self.recorder = self.make_recorder()

    def exe(self, impl, w, tree='notrace'):
        b = os.path.join(self.trees[tree], 'bench')
        if impl == 'wsr':
            return [os.path.join(b, 'bench-' + w)]
        if impl == 'go':
            return [os.path.join(b, 'wsrbench-go'), w]
        if impl == 'omp':
            return [os.path.join(b, 'bench-omp-' + w)]
        raise ValueError(impl)

    def have(self, impl, w):
        return os.path.exists(self.exe(impl, w)[0])

    def make_recorder(self):
        # `wsr run` ingests and reports after recording when it can; the benchmark
        # wants the recording only. Use --no-ingest when this wsr has it; otherwise run
        # a copy of the binary from a directory with no `wsr` beside it, which makes
        # run_postprocess fall back to its one-line summary.
        wsr = os.path.join(self.trees['traced'], 'analyzer', 'wsr')
        if not os.path.exists(wsr):
            return None
        if '--no-ingest' in out_of([wsr, 'run', '--help']) + out_of([wsr, 'help', 'run']):
            return [wsr, 'run', '--no-ingest']
        d = os.path.join(self.outdir, 'rec')
        os.makedirs(d, exist_ok=True)
        copy = os.path.join(d, 'wsr-record')
        shutil.copy2(wsr, copy)
        return [copy, 'run']

    def measure(self, key, impl, w, procs, variant='plain'):
        args = self.sizes[w]
        env = {PROCS_ENV[impl]: str(procs)}
        tree = 'notrace'
        cmd = None
        if variant == 'in':
            tree = 'traced'
        elif variant == 'run':
            tree = 'traced'
            tdir = os.path.join(self.outdir, 'traces', f'{w}-{procs}')
            shutil.rmtree(tdir, ignore_errors=True)
            os.makedirs(os.path.dirname(tdir), exist_ok=True)
            cmd = self.recorder + ['--out', tdir, '--'] + self.exe(impl, w, tree) + args
        elif variant == 'gotrace':
            tfile = os.path.join(self.outdir, 'traces', f'{w}-{procs}.gotrace')
            os.makedirs(os.path.dirname(tfile), exist_ok=True)
            cmd = [self.exe('go', w)[0], '-trace', tfile, w] + args
        if cmd is None:
            cmd = self.exe(impl, w, tree) + args
        label = f'{w} {impl}/{variant} P={procs}'
        r = run_once(cmd, env, label)
        if variant == 'run':
            m = re.search(r'(\d+) events over .*?(\d+) events discarded', r['_stderr'])
            r['events'], r['discarded'] = (m.group(1), m.group(2)) if m else ('?', '?')
            shutil.rmtree(tdir, ignore_errors=True)
        elif variant == 'gotrace':
            r['trace_bytes'] = str(os.path.getsize(tfile))
            os.unlink(tfile)
        stderr = r.pop('_stderr')
        self.raw.write(f'{key} variant={variant} {" ".join(f"{k}={v}" for k, v in r.items())}\n')
        self.raw.flush()
        ck = (w, ' '.join(args))
        want = self.checks.setdefault(ck, (r['check'], r['ops'], label))
        if (r['check'], r['ops']) != want[:2]:
            self.failures.append(f'{label}: check={r["check"]} ops={r["ops"]}, but '
                                 f'{want[2]} gave check={want[0]} ops={want[1]}')
        log(f'  {label:34s} {float(r["ops_per_sec"]) / 1e6:9.3f} Mops/s  {r["secs"]} s'
            + (f'  ({r["events"]} events, {r["discarded"]} discarded)'
               if variant == 'run' else ''))
        if stderr.strip() and variant not in ('run',):
            log('    stderr: ' + stderr.strip().replace('\n', '\n    stderr: '))
        return r

    def alternate(self, key, cells, procs, w, runs=None):
        # cells: list of (name, impl, variant); each run rotates the starting cell. A cell
        # whose program fails is reported (once, with its error) and not run again.
        got = {c[0]: [] for c in cells}
        for i in range(runs or self.runs):
            for j in range(len(cells)):
                name, impl, variant = cells[(i + j) % len(cells)]
                if got[name] is None:
                    continue
                try:
                    got[name].append(self.measure(key, impl, w, procs, variant))
                except BenchError as e:
                    self.note_failure(e)
                    got[name] = None
        return {k: (v if v is not None else FAILED) for k, v in got.items()}

    def note_failure(self, e):
        msg = str(e)
        lines = msg.splitlines()
        why = next((ln.strip() for ln in lines if 'fatal error' in ln or 'error' in ln.lower()),
                   lines[-1] if lines else '?')
        self.errors.append(f'{lines[0]} -- {why}')
        log(f'  FAILED: {lines[0]}\n    {why}')

    def rss(self, impl, w, procs):
        tf = os.path.join(self.outdir, 'rss.tmp')
        cmd = ['/usr/bin/time', '-f', '%M', '-o', tf] + self.exe(impl, w) + self.sizes[w]
        run_once(cmd, {PROCS_ENV[impl]: str(procs)}, f'rss {w} {impl} P={procs}')
        with open(tf) as f:
            kb = int(f.read().strip().splitlines()[-1])
        os.unlink(tf)
        log(f'  rss {w} {impl} P={procs}: {kb / 1024:.1f} MiB')
        return kb


def med(rs, key='ops_per_sec'):
    return statistics.median(float(r[key]) for r in rs)


def spread(rs, key='ops_per_sec'):
    v = [float(r[key]) for r in rs]
    m = statistics.median(v)
    return 100.0 * (max(v) - min(v)) / 2 / m if m else 0.0


def fmt_rate(rs):
    if isinstance(rs, Failed):
        return 'failed'
    if not rs:
        return '–'
    m = med(rs)
    unit = f'{m / 1e6:.3f} M' if m >= 1e5 else f'{m / 1e3:.1f} k'
    return f'{unit} ±{spread(rs):.0f}%'


def ratio(a, b):
    return f'{med(a) / med(b):.2f}' if a and b else '–'


def machine_info(trees):
    cpu = '?'
    try:
        with open('/proc/cpuinfo') as f:
            for line in f:
                if line.startswith('model name'):
                    cpu = line.split(':', 1)[1].strip()
                    break
    except OSError:
        pass
    commit = out_of(['git', '-C', SRC, 'rev-parse', '--short=12', 'HEAD'])
    dirty = out_of(['git', '-C', SRC, 'status', '--porcelain', '--untracked-files=no'])
    return {
        'date': datetime.datetime.utcnow().strftime('%Y-%m-%d %H:%M UTC'),
        'commit': commit + (' (tree has uncommitted changes)' if dirty else ''),
        'host': f'{platform.system()} {platform.release()}, {cpu}, {os.cpu_count()} CPUs',
        'os': out_of(['sh', '-c', '. /etc/os-release && echo "$PRETTY_NAME"']),
        'gcc': out_of(['gcc', '-dumpfullversion']),
        'clang': out_of(['sh', '-c', 'clang --version | head -1']),
        'go': out_of(['go', 'version']),
        'load': ' '.join(os.getloadavg().__repr__().strip('()').split(', ')),
    }


def main():
    ap = argparse.ArgumentParser(prog='bench/run.sh', description='wsr benchmarks (issue 8): '
                                 'wsr vs Go vs LLVM OpenMP, tracing cost, peak RSS.')
    ap.add_argument('--quick', action='store_true', help='small sizes, 3 runs: a few minutes')
    ap.add_argument('--runs', type=int, help='runs per cell (default 5, --quick 3)')
    ap.add_argument('--trace-runs', type=int,
                    help='runs per cell of the tracing section (default 5, --quick 2): its traced '
                    'runs are the slowest of all (Go\'s runtime/trace makes spawn_tree ~4x slower)')
    ap.add_argument('--builddir', default=os.environ.get('WSR_BENCH_DIR', '/tmp/wsr-bench'),
                    help='where the build trees and results go (default /tmp/wsr-bench)')
    ap.add_argument('--only', help='comma-separated workloads (default all)')
    ap.add_argument('--procs', default='1,2', help='P counts for the throughput table')
    ap.add_argument('--skip', default='', help='comma-separated sections to skip: '
                    'throughput,tracing,rss')
    ap.add_argument('--size', action='append', default=[], metavar='WORKLOAD=ARGS',
                    help='override a workload\'s arguments, e.g. --size spawn_tree=27 '
                    '(space-separated ARGS; repeatable)')
    ap.add_argument('--commit', metavar='REV', help='build a clean export of commit REV (git '
                    'archive) instead of the working tree, e.g. --commit HEAD')
    ap.add_argument('--no-build', action='store_true', help='use the build trees as they are')
    a = ap.parse_args()
    runs = a.runs or (3 if a.quick else 5)
    trace_runs = a.trace_runs or (2 if a.quick else 5)
    if runs < 1 or trace_runs < 1:
        ap.error('--runs and --trace-runs must be >= 1')
    only = a.only.split(',') if a.only else WORKLOADS
    for w in only:
        if w not in WORKLOADS:
            ap.error(f'unknown workload {w}')
    procs = [int(p) for p in a.procs.split(',')]
    skip = set(filter(None, a.skip.split(',')))
    sizes = dict(QUICK if a.quick else FULL)
    for o in a.size:
        w, eq, args = o.partition('=')
        if not eq or w not in WORKLOADS or not args.split():
            ap.error(f'--size {o}: want WORKLOAD=ARGS with a known workload')
        sizes[w] = args.split()

    root = os.path.abspath(a.builddir)
    os.makedirs(root, exist_ok=True)
    commit = None
    try:
        if a.commit:
            src, root, commit = export_commit(root, a.commit)
            trees = build(root, a.no_build, src)
        else:
            trees = build(root, a.no_build)
    except (BenchError, subprocess.CalledProcessError) as e:
        log(f'bench/run.sh: error: {e}')
        return 1
    outdir = os.path.join(root, 'results-' + datetime.datetime.utcnow().strftime('%Y%m%d-%H%M%S'))
    os.makedirs(outdir)
    info = machine_info(trees)
    if commit:
        info['commit'] = commit + ' (clean export)'
    rn = Runner(trees, sizes, runs, outdir)
    md = []
    md.append(f'Run of `bench/run.sh{" --quick" if a.quick else ""}` on {info["date"]}, '
              f'commit {info["commit"]}; {runs} alternating runs per cell, medians '
              f'(± half the min–max range, relative to the median).')
    md.append('')
    md.append(f'Machine: {info["host"]}; {info["os"]}; gcc {info["gcc"]}; {info["clang"]}; '
              f'{info["go"]}; load average at start {info["load"]}.')
    md.append('')
    results = {}

    try:
        if 'throughput' not in skip:
            log('== throughput (wsr: -Dtracing=disabled release build)')
            for p in procs:
                for w in only:
                    cells = [('wsr', 'wsr', 'plain'), ('go', 'go', 'plain')]
                    if w in OMP_WORKLOADS and rn.have('omp', w):
                        cells.append(('omp', 'omp', 'plain'))
                    results[(w, p)] = rn.alternate(f'throughput P={p}', cells, p, w)
            md.append('### Throughput (ops/s, higher is better; ratio > 1: wsr is faster)')
            md.append('')
            md.append('| workload | size | P | wsr | Go | wsr/Go | OpenMP | wsr/OpenMP |')
            md.append('|---|---|---|---|---|---|---|---|')
            for w in only:
                for p in procs:
                    r = results[(w, p)]
                    md.append(f'| {w} | {" ".join(sizes[w])} | {p} | {fmt_rate(r["wsr"])} | '
                              f'{fmt_rate(r["go"])} | **{ratio(r["wsr"], r["go"])}** | '
                              f'{fmt_rate(r.get("omp"))} | {ratio(r["wsr"], r.get("omp"))} |')
            md.append('')
            if 'skewed' in only and 1 in procs and 2 in procs:
                md.append('skewed speedup from 1 to 2 Ps (median ops/s at 2 Ps / at 1 P): ' +
                          ', '.join(f'{impl} {med(results[("skewed", 2)][impl]) / med(results[("skewed", 1)][impl]):.2f}×'
                                    for impl in ('wsr', 'go', 'omp')
                                    if results[('skewed', 1)].get(impl) and results[('skewed', 2)].get(impl)) + '.')
                md.append('')
            if 'sleep_timers' in only:
                md.append('| sleep_timers | P | wakeups/s | oversleep p50 (µs) | oversleep p99 (µs) |')
                md.append('|---|---|---|---|---|')
                for p in procs:
                    for impl in ('wsr', 'go'):
                        rs = results[('sleep_timers', p)][impl]
                        if not rs:
                            md.append(f'| {impl} | {p} | failed | | |')
                            continue
                        md.append(f'| {impl} | {p} | {med(rs, "wakeups_per_sec"):.0f} | '
                                  f'{med(rs, "oversleep_p50_us"):.1f} | '
                                  f'{med(rs, "oversleep_p99_us"):.1f} |')
                md.append('')

        if 'tracing' not in skip:
            tw = [w for w in TRACE_WORKLOADS if w in only]
            log('== tracing cost at 2 Ps')
            tres = {}
            for w in tw:
                cells = [('out', 'wsr', 'plain'), ('in', 'wsr', 'in'), ('go', 'go', 'plain'),
                         ('gotrace', 'go', 'gotrace')]
                if rn.recorder:
                    cells.insert(2, ('run', 'wsr', 'run'))
                tres[w] = rn.alternate('tracing P=2', cells, 2, w, trace_runs)
            md.append(f'### Tracing cost at 2 Ps ({trace_runs} alternating runs per cell; ops/s; '
                      'slowdown = time relative to the untraced run)')
            md.append('')
            md.append('| workload | wsr compiled out | compiled in, no session | slowdown | CPU time | '
                      'under `wsr run` | slowdown | events (discarded) | Go | Go + runtime/trace | slowdown |')
            md.append('|---|---|---|---|---|---|---|---|---|---|---|')

            def slow(base, x):
                return f'{(med(base) / med(x) - 1) * 100:+.1f}%' if base and x else '–'

            def cpu_slow(base, x):
                return (f'{(med(x, "cpu_secs") / med(base, "cpu_secs") - 1) * 100:+.1f}%'
                        if base and x else '–')
            for w in tw:
                r = tres[w]
                run = r.get('run', [])
                ev = (f'{statistics.median(int(x["events"]) for x in run if x["events"] != "?"):.0f} '
                      f'({statistics.median(int(x["discarded"]) for x in run if x["discarded"] != "?"):.0f})'
                      if run and all(x['events'] != '?' for x in run) else '?')
                md.append(f'| {w} | {fmt_rate(r["out"])} | {fmt_rate(r["in"])} | {slow(r["out"], r["in"])} | '
                          f'{cpu_slow(r["out"], r["in"])} | {fmt_rate(run)} | {slow(r["out"], run)} | {ev} | {fmt_rate(r["go"])} | '
                          f'{fmt_rate(r["gotrace"])} | {slow(r["go"], r["gotrace"])} |')
            md.append('')
            # The slowdowns above are relative to each runtime's own untraced
            # time, so a faster runtime shows a larger slowdown for the same
            # tracer cost. The time tracing adds per operation compares the
            # tracers themselves, from the same medians.
            md.append('Time tracing adds per operation (from the medians above: '
                      '1 / traced rate - 1 / untraced rate):')
            md.append('')
            md.append('| workload | wsr run: µs per op | wall ns per event | Go runtime/trace: µs per op | '
                      'wsr / Go | traced throughput, wsr / Go |')
            md.append('|---|---|---|---|---|---|')

            def added_us(base, x):
                return (1.0 / med(x) - 1.0 / med(base)) * 1e6 if base and x else None

            def failed_or(v, *cells):
                # A cell whose program failed says so, as in the table above.
                return 'failed' if any(isinstance(c, Failed) for c in cells) else v

            for w in tw:
                r = tres[w]
                run = r.get('run', [])
                aw, ag = added_us(r['out'], run), added_us(r['go'], r['gotrace'])
                per_ev = '–'
                if aw is not None and all(x['events'] != '?' and x['discarded'] != '?'
                                          for x in run):
                    # Emitted events: a discarded one cost its probe too.
                    evs = statistics.median(int(x['events']) + int(x['discarded']) for x in run)
                    ops = float(run[0]['ops'])
                    per_ev = f'{aw * 1e3 * ops / evs:.0f}' if evs else '–'
                rel = f'{aw / ag:.2f}' if aw is not None and ag else '–'
                tput = f'{med(run) / med(r["gotrace"]):.2f}' if run and r['gotrace'] else '–'
                aws = failed_or('–' if aw is None else f'{aw:.3f}', r['out'], run)
                ags = failed_or('–' if ag is None else f'{ag:.3f}', r['go'], r['gotrace'])
                per_ev = failed_or(per_ev, r['out'], run)
                rel = failed_or(rel, r['out'], run, r['go'], r['gotrace'])
                tput = failed_or(tput, run, r['gotrace'])
                md.append(f'| {w} | {aws} | {per_ev} | {ags} | {rel} | {tput} |')
            md.append('')
            results['tracing'] = tres

        if 'rss' not in skip and 'spawn_flat' in only:
            log('== peak RSS of spawn_flat')
            md.append(f'### Peak RSS of spawn_flat {" ".join(sizes["spawn_flat"])} '
                      '(`/usr/bin/time -f %M`, median MiB)')
            md.append('')
            md.append('| P | wsr | Go | OpenMP |')
            md.append('|---|---|---|---|')
            impls = ['wsr', 'go'] + (['omp'] if rn.have('omp', 'spawn_flat') else [])
            for p in procs:
                kb = {i: [] for i in impls}
                for k in range(runs):
                    for j in range(len(impls)):
                        impl = impls[(k + j) % len(impls)]
                        if kb[impl] is None:
                            continue
                        try:
                            kb[impl].append(rn.rss(impl, 'spawn_flat', p))
                        except BenchError as e:
                            rn.note_failure(e)
                            kb[impl] = None
                cellv = {i: (f'{statistics.median(kb[i]) / 1024:.1f} (±{(max(kb[i]) - min(kb[i])) / 2048:.1f})'
                             if kb[i] else 'failed') for i in impls}
                md.append(f'| {p} | {cellv["wsr"]} | {cellv["go"]} | {cellv.get("omp", "–")} |')
                results[('rss', p)] = kb
            md.append('')
    except BenchError as e:
        log(f'bench/run.sh: error: {e}')
        return 1
    finally:
        rn.raw.close()

    if rn.errors:
        md.append('Failed runs (the cell says `failed`; it was not run again):')
        md.append('')
        md.extend(f'- `{e}`' for e in rn.errors)
        md.append('')
    md.append(f'Load average at the end: {" ".join(f"{x:.2f}" for x in os.getloadavg())}. '
              f'Raw lines: {os.path.join(outdir, "raw.txt")}.')
    text = '\n'.join(md) + '\n'
    with open(os.path.join(outdir, 'results.md'), 'w') as f:
        f.write(text)
    with open(os.path.join(outdir, 'results.json'), 'w') as f:
        json.dump({repr(k): v for k, v in results.items()}, f, indent=1)
    print(text)
    if rn.failures:
        log('bench/run.sh: error: results differ between runs or implementations:')
        for m in rn.failures:
            log('  ' + m)
    if rn.errors:
        log(f'bench/run.sh: error: {len(rn.errors)} benchmark program(s) failed (see the list above)')
    return 1 if rn.failures or rn.errors else 0


if __name__ == '__main__':
    sys.exit(main())
