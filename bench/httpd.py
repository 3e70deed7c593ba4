#!/usr/bin/env python3
# httpd.py - the HTTP benchmark (issue 17): examples/httpd on libwsr against
# bench/go/httpd on Go's net/http, both driven by wrk (Debian package wrk), at
# 1 and 2 Ps (WSRMAXPROCS, GOMAXPROCS), the two servers run alternately (run i
# starts with a different one), on / (a static body) and /work (a pread in a
# blocking call plus a little CPU work). See docs/performance.md, "HTTP server
# under wrk".
#
#   bench/httpd.py [--quick] [--runs N] [--duration S] [--connections N] [--procs 1,2]
#   bench/httpd.py --record DIR [--procs 2] [--paths /]    one wsr run of the traced build
#
# Each run starts a fresh server, warms it up with wrk for --warmup seconds,
# measures with wrk for --duration seconds (bench/httpd-wrk.lua prints wrk's
# figures in one line), then stops the server with SIGTERM and takes its CPU
# time and context switches from wait4(). wsr runs with WSRDEBUG=stats=1 (the
# counters are kept anyway; the flag only prints them at exit), so the table
# also shows what its scheduler did per request.
#
# CPU placement (taskset): wrk gets one thread on the last CPU this process
# may use. At P Ps the server is pinned to the first P CPUs when at least P+1
# CPUs are available, so that neither competes with the load generator;
# otherwise (2 Ps on a 2-CPU machine) the server is left unpinned and shares
# wrk's CPU, which both servers do alike. The placement is printed with the
# table.
#
# Invariants: a run with a socket error, a non-2xx response, a server that does
# not exit 0 after SIGTERM, or (wsr) counters that do not add up makes the
# command exit 1 after the tables; no time is ever asserted. Exit 2 on usage
# errors. Concurrency: one server and one wrk at a time.

import argparse
import datetime
import os
import re
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run as benchrun  # noqa: E402  (bench/run.py: build trees, machine description)

LUA = os.path.join(HERE, 'httpd-wrk.lua')
PROCS_ENV = {'wsr': 'WSRMAXPROCS', 'go': 'GOMAXPROCS'}
START_TIMEOUT = 30
STOP_TIMEOUT = 60


class HttpdError(Exception):
    pass


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def wrk_path():
    w = shutil.which('wrk')
    if w is None:
        raise HttpdError('wrk not found (Debian: apt-get install wrk)')
    return w


def parse_kv(line):
    return dict(kv.split('=', 1) for kv in line.split()[1:])


def parse_counters(text):
    # examples/httpd's exit lines ("requests = N") and the "wsr stats:" line.
    out = {}
    for line in text.splitlines():
        m = re.fullmatch(r'([a-z ]+) = (\d+)', line.strip())
        if m:
            out[m.group(1).replace(' ', '_')] = int(m.group(2))
        if line.startswith('wsr stats:'):
            out['stats'] = {k: int(v) for k, v in
                            (kv.split('=', 1) for kv in line.split()[2:])}
    return out


class Server:
    """A server process: started, asked for its port, stopped with SIGTERM."""

    def __init__(self, cmd, env, cpus=None, stdin=subprocess.DEVNULL):
        full = (['taskset', '-c', cpus] if cpus else []) + cmd
        self.cmd = full
        self.p = subprocess.Popen(full, env=env, stdin=stdin, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        self.port = None
        self.head = []
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            line = self.p.stdout.readline()
            if not line:
                break
            self.head.append(line)
            m = re.match(r'listening on 127\.0\.0\.1:(\d+)', line)
            if m:
                self.port = int(m.group(1))
                return
        self.kill()
        raise HttpdError(f'{" ".join(full)}: no "listening on" line: {"".join(self.head)}'
                         f'{self.p.stderr.read()}')

    def kill(self):
        if self.p.poll() is None:
            self.p.kill()
        self.p.wait()

    def stop(self, sig=signal.SIGTERM):
        """SIGTERM, wait; returns (status, stdout, stderr, rusage)."""
        self.p.send_signal(sig)
        deadline = time.monotonic() + STOP_TIMEOUT
        while time.monotonic() < deadline:
            pid, status, ru = os.wait4(self.p.pid, os.WNOHANG)
            if pid == self.p.pid:
                self.p.returncode = os.waitstatus_to_exitcode(status)
                out = ''.join(self.head) + self.p.stdout.read()
                return self.p.returncode, out, self.p.stderr.read(), ru
            time.sleep(0.02)
        self.kill()
        raise HttpdError(f'{" ".join(self.cmd)}: still running {STOP_TIMEOUT} s after SIGTERM')


def run_wrk(port, path, conns, secs, cpus=None, count=False, timeout='30s', threads=1):
    cmd = ([] if cpus is None else ['taskset', '-c', cpus]) + [
        wrk_path(), f'-t{threads}', f'-c{conns}', f'-d{secs}s', f'--timeout={timeout}',
        '-s', LUA, f'http://127.0.0.1:{port}{path}']
    if count:
        cmd += ['--', 'count']
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=secs + 120)
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    line = next((ln for ln in p.stdout.splitlines() if ln.startswith('wrk-result ')), None)
    if p.returncode != 0 or line is None:
        raise HttpdError(f'{" ".join(cmd)}: exit {p.returncode}\n{p.stdout}{p.stderr}')
    r = {k: (float(v) if '.' in v else int(v)) for k, v in parse_kv(line).items()}
    r['rps'] = r['requests'] / (r['duration_us'] / 1e6)
    # wrk's own CPU time: a load generator short of CPU caps what a server can show.
    r['wrk_cpu_s'] = ru1.ru_utime + ru1.ru_stime - ru0.ru_utime - ru0.ru_stime
    return r


def wrk_errors(r):
    """The socket errors and non-2xx responses of one wrk result, as text ('' if none)."""
    bad = [f'{k} {r[k]}' for k in ('connect', 'read', 'write', 'timeout', 'status') if r[k]]
    return ', '.join(bad)


def placement(procs, ncpus=None):
    """(server CPUs or None for unpinned, wrk CPU, description)."""
    cpus = sorted(os.sched_getaffinity(0)) if ncpus is None else list(range(ncpus))
    wrk_cpu = str(cpus[-1])
    if len(cpus) >= procs + 1:
        srv = ','.join(str(c) for c in cpus[:procs])
        return srv, wrk_cpu, f'server on CPU {srv}, wrk on CPU {wrk_cpu}'
    return None, wrk_cpu, f'server unpinned (all {len(cpus)} CPUs), wrk on CPU {wrk_cpu}'


def server_cmd(impl, exe, rounds, workfile):
    if impl == 'wsr':
        return [exe, '--rounds', str(rounds), '--file', workfile]
    return [exe, '-rounds', str(rounds), '-file', workfile]


def server_env(impl, procs, extra=None):
    env = dict(os.environ)
    for k in ('WSRDEBUG', 'GODEBUG', 'WSRMAXPROCS', 'GOMAXPROCS'):
        env.pop(k, None)
    env[PROCS_ENV[impl]] = str(procs)
    if impl == 'wsr':
        env['WSRDEBUG'] = 'stats=1'
    env.update(extra or {})
    return env


def check_wsr_counters(c, w, label):
    """examples/httpd's counters against wrk's: every request it parsed was
    answered or lost to a closed peer; wrk received no more than it answered."""
    problems = []
    for k in ('requests', 'responses', 'responses_lost', 'bad_requests', 'io_errors'):
        if k not in c:
            return [f'{label}: no "{k.replace("_", " ")} =" line at exit']
    if c['io_errors'] or c['bad_requests']:
        problems.append(f'{label}: io errors {c["io_errors"]}, bad requests {c["bad_requests"]}')
    if c['requests'] != c['responses']:
        problems.append(f'{label}: {c["requests"]} requests parsed but {c["responses"]} answered')
    if c['responses'] - c['responses_lost'] < w['requests']:
        problems.append(f'{label}: wrk received {w["requests"]} responses, the server wrote '
                        f'{c["responses"] - c["responses_lost"]}')
    return problems


def measure(impl, exe, procs, path, a, workfile):
    srv_cpus, wrk_cpu, _ = placement(procs)
    label = f'{impl} P={procs} {path}'
    t0 = time.monotonic()
    s = Server(server_cmd(impl, exe, a.rounds, workfile), server_env(impl, procs), srv_cpus)
    try:
        if a.warmup > 0:
            run_wrk(s.port, path, a.connections, a.warmup, wrk_cpu)
        w = run_wrk(s.port, path, a.connections, a.duration, wrk_cpu)
        # The totals below cover the warm-up too; the per-request figures use them.
        status, out, err, ru = s.stop()
    except BaseException:
        s.kill()
        raise
    problems = []
    if wrk_errors(w):
        problems.append(f'{label}: wrk: {wrk_errors(w)}')
    if status != 0:
        problems.append(f'{label}: server exit {status}: {err.strip()[-500:]}')
    c = parse_counters(out + err)
    if impl == 'wsr' and status == 0:
        problems += check_wsr_counters(c, w, label)
    if impl == 'go' and status == 0 and c.get('requests', -1) < w['requests']:
        problems.append(f'{label}: wrk received {w["requests"]} responses, the server counted '
                        f'{c.get("requests", "no")} requests')
    total = c.get('requests') or c.get('responses')
    w['cpu_s'] = ru.ru_utime + ru.ru_stime
    w['srv_wall_s'] = time.monotonic() - t0
    w['served'] = total or 0
    w['cpu_us_per_req'] = w['cpu_s'] / total * 1e6 if total else float('nan')
    w['csw_per_req'] = (ru.ru_nvcsw + ru.ru_nivcsw) / total if total else float('nan')
    w['stats'] = c.get('stats', {})
    w['srv_util'] = w['cpu_s'] / w['srv_wall_s'] if w['srv_wall_s'] else float('nan')
    w['wrk_util'] = w['wrk_cpu_s'] / (w['duration_us'] / 1e6)
    log(f'  {label:16s} {w["rps"]:10.0f} req/s  p50 {w["p50_us"]:6d} µs  p99 {w["p99_us"]:6d} µs'
        f'  CPU {w["cpu_us_per_req"]:5.1f} µs/req, server {w["srv_util"]:.2f} CPUs, '
        f'wrk {w["wrk_util"]:.2f}' + (f'  PROBLEM: {"; ".join(problems)}' if problems else ''))
    return w, problems


def med(rs, k):
    return statistics.median(r[k] for r in rs)


def spread(rs, k):
    v = [r[k] for r in rs]
    m = statistics.median(v)
    return 100.0 * (max(v) - min(v)) / 2 / m if m else 0.0


def per_req(rs, key):
    # Scheduler counters of the wsr runs per request served (warm-up included).
    v = [r['stats'].get(key, 0) / r['served'] for r in rs if r['served'] and r['stats']]
    return statistics.median(v) if v else float('nan')


def find_exes(a):
    if a.wsr_exe and a.go_exe:
        return {'wsr': a.wsr_exe, 'go': a.go_exe}, None
    root = os.path.abspath(a.builddir)
    trees = benchrun.build(root, a.no_build)
    exes = {'wsr': os.path.join(trees['notrace'], 'examples', 'httpd'),
            'go': os.path.join(trees['notrace'], 'bench', 'wsrhttpd-go')}
    for impl, e in exes.items():
        if not os.path.exists(e):
            raise HttpdError(f'{e} was not built (wsr: libhttp-parser-dev; Go: golang-go)')
    return exes, trees


def section(a, exes, outdir):
    """Runs the table; returns (markdown lines, problems)."""
    procs = [int(p) for p in a.procs.split(',')]
    paths = a.paths.split(',')
    workfile = os.path.join(outdir, 'workfile')
    # The file /work reads: the same 4 KiB for both servers, so their bodies match.
    with open(workfile, 'wb') as f:
        f.write(bytes((i * 131 + 7) % 256 for i in range(4096)))
    results, problems = {}, []
    raw = open(os.path.join(outdir, 'httpd-raw.txt'), 'w')
    log('== HTTP: wrk against examples/httpd (wsr) and bench/go/httpd (Go)')
    impls = ['wsr', 'go']
    for p in procs:
        for path in paths:
            got = {i: [] for i in impls}
            for k in range(a.runs):
                for j in range(len(impls)):
                    impl = impls[(k + j) % len(impls)]
                    w, probs = measure(impl, exes[impl], p, path, a, workfile)
                    problems += probs
                    got[impl].append(w)
                    raw.write(f'httpd impl={impl} procs={p} path={path} ' +
                              ' '.join(f'{k2}={v}' for k2, v in w.items() if k2 != 'stats') +
                              ' ' + ' '.join(f'st_{k2}={v}' for k2, v in w['stats'].items()) + '\n')
                    raw.flush()
            results[(p, path)] = got
    raw.close()
    md = [f'### HTTP server under wrk ({a.runs} alternating runs per cell, {a.duration} s each '
          f'after {a.warmup} s of warm-up; wrk -t1 -c{a.connections}; medians, ± half the '
          'min–max range)', '']
    md.append('CPU placement: ' + '; '.join(f'{p} P: {placement(p)[2]}' for p in procs) + '.')
    md.append('')
    md.append('| path | P | wsr req/s | Go req/s | **wsr/Go** | p50 wsr / Go (µs) | '
              'p99 wsr / Go (µs) | p99 wsr/Go | CPU µs/req wsr / Go |')
    md.append('|---|---|---|---|---|---|---|---|---|')
    for p in procs:
        for path in paths:
            r = results[(p, path)]
            wv, gv = r['wsr'], r['go']
            md.append(
                f'| `{path}` | {p} | {med(wv, "rps") / 1e3:.1f} k ±{spread(wv, "rps"):.0f}% | '
                f'{med(gv, "rps") / 1e3:.1f} k ±{spread(gv, "rps"):.0f}% | '
                f'**{med(wv, "rps") / med(gv, "rps"):.2f}** | '
                f'{med(wv, "p50_us"):.0f} / {med(gv, "p50_us"):.0f} | '
                f'{med(wv, "p99_us"):.0f} / {med(gv, "p99_us"):.0f} | '
                f'{med(wv, "p99_us") / med(gv, "p99_us"):.2f} | '
                f'{med(wv, "cpu_us_per_req"):.1f} / {med(gv, "cpu_us_per_req"):.1f} |')
    md.append('')
    md.append('What wsr\'s scheduler did, per request (the `WSRDEBUG=stats=1` counters of '
              'the same runs divided by the requests served, warm-up included; medians):')
    md.append('')
    keys = ['netpoll', 'g_ready', 'globrunq_put', 'spin_start', 'steal', 'm_park',
            'p_idle', 'syscall_enter', 'handoff', 'preempt']
    md.append('| path | P | ' + ' | '.join(keys) + ' | context switches |')
    md.append('|---|---|' + '---|' * (len(keys) + 1))
    for p in procs:
        for path in paths:
            wv = results[(p, path)]['wsr']
            md.append(f'| `{path}` | {p} | ' + ' | '.join(f'{per_req(wv, k):.3f}' for k in keys) +
                      f' | {med(wv, "csw_per_req"):.3f} |')
    md.append('')
    return md, problems, results


def record(a, outdir):
    """One recording of examples/httpd (traced build) under `wsr run` while wrk drives it."""
    if a.wsr_exe:
        exe, wsr = a.wsr_exe, a.wsr
    else:
        trees = benchrun.build(os.path.abspath(a.builddir), a.no_build)
        exe = os.path.join(trees['traced'], 'examples', 'httpd')
        wsr = a.wsr or os.path.join(trees['traced'], 'analyzer', 'wsr')
    procs = int(a.procs.split(',')[0])
    path = a.paths.split(',')[0]
    srv_cpus, wrk_cpu, where = placement(procs)
    workfile = os.path.join(outdir, 'workfile')
    with open(workfile, 'wb') as f:
        f.write(bytes((i * 131 + 7) % 256 for i in range(4096)))
    tdir = os.path.abspath(a.record)
    cmd = [wsr, 'run', '--out', tdir, '--'] + server_cmd('wsr', exe, a.rounds, workfile)
    log(f'== {" ".join(cmd)} at {procs} P ({where}); wrk {a.duration} s on {path}')
    s = Server(cmd, server_env('wsr', procs), srv_cpus)
    try:
        w = run_wrk(s.port, path, a.connections, a.duration, wrk_cpu)
        status, out, err, ru = s.stop()
    except BaseException:
        s.kill()
        raise
    print(out)
    print(err, file=sys.stderr)
    print(f'wrk: {w["rps"]:.0f} req/s, p50 {w["p50_us"]} µs, p99 {w["p99_us"]} µs, '
          f'{w["requests"]} requests, errors: {wrk_errors(w) or "none"}')
    problems = check_wsr_counters(parse_counters(out + err), w, 'recorded run')
    if status != 0:
        problems.append(f'wsr run exited {status}')
    return problems


def prioritize(nice):
    """Gives this process and its children more CPU than the machine's other work.

    With autogroup scheduling (/proc/sys/kernel/sched_autogroup_enabled = 1,
    Debian's default) the kernel first shares each CPU between sessions and
    only then between a session's processes by their nice values, so a plain
    `nice` changes nothing against another user's session. A session of our
    own (setsid) gets a group of its own, and /proc/self/autogroup sets the
    group's nice. Without autogroup the process nice value does the same.
    """
    if os.getsid(0) != os.getpid():
        try:
            os.setsid()
        except PermissionError:
            # A process-group leader cannot start a session: re-exec under setsid(1).
            os.execvp('setsid', ['setsid', '--wait', sys.executable] + sys.argv)
    try:
        with open('/proc/self/autogroup', 'w') as f:
            f.write(str(nice))
    except OSError as e:
        log(f'bench/httpd.py: note: /proc/self/autogroup: {e}')
    try:
        os.setpriority(os.PRIO_PROCESS, 0, nice)
    except OSError as e:
        raise HttpdError(f'--nice {nice}: {e}')


def main():
    ap = argparse.ArgumentParser(prog='bench/httpd.py', description='HTTP/1.1 server on wsr vs '
                                 'Go net/http under wrk (issue 17).')
    ap.add_argument('--quick', action='store_true', help='3 runs of 3 s per cell')
    ap.add_argument('--runs', type=int, help='runs per cell (default 5, --quick 3)')
    ap.add_argument('--duration', type=int, help='seconds of wrk per run (default 10, --quick 3)')
    ap.add_argument('--warmup', type=int, default=1, help='seconds of wrk before each run (1)')
    ap.add_argument('--connections', type=int, default=64, help='wrk connections (64)')
    ap.add_argument('--procs', default='1,2', help='P counts (default 1,2)')
    ap.add_argument('--paths', default='/,/work', help='paths to load (default /,/work)')
    ap.add_argument('--rounds', type=int, default=5000, help='hash rounds of /work (5000)')
    ap.add_argument('--nice', type=int, help='run in a session of its own whose scheduling '
                    'group (and processes) have this nice value, e.g. -15 as root, so that a '
                    'shared machine\'s other work takes less CPU from the servers and wrk '
                    '(see prioritize())')
    ap.add_argument('--builddir', default=os.environ.get('WSR_BENCH_DIR', '/tmp/wsr-bench'),
                    help='build trees, as bench/run.sh (default /tmp/wsr-bench)')
    ap.add_argument('--no-build', action='store_true', help='use the build trees as they are')
    ap.add_argument('--wsr-exe', help='examples/httpd to run instead of the build tree\'s')
    ap.add_argument('--go-exe', help='wsrhttpd-go to run instead of the build tree\'s')
    ap.add_argument('--record', metavar='DIR', help='record one wsr run under `wsr run --out DIR` '
                    'instead of the table (first of --procs and --paths)')
    ap.add_argument('--wsr', help='the wsr command for --record (default: the traced tree\'s)')
    a = ap.parse_args()
    # 0 is a value here, not "unset": an explicit --runs 0 is a usage error.
    a.runs = (3 if a.quick else 5) if a.runs is None else a.runs
    a.duration = (3 if a.quick else 10) if a.duration is None else a.duration
    if a.runs < 1 or a.duration < 1 or a.connections < 1 or a.warmup < 0:
        ap.error('--runs, --duration and --connections must be >= 1, --warmup >= 0')
    if a.nice is not None:
        try:
            prioritize(a.nice)
        except HttpdError as e:
            log(f'bench/httpd.py: error: {e}')
            return 2
    root = os.path.abspath(a.builddir)
    os.makedirs(root, exist_ok=True)
    outdir = os.path.join(root, 'httpd-' + datetime.datetime.utcnow().strftime('%Y%m%d-%H%M%S'))
    os.makedirs(outdir)
    try:
        if a.record:
            problems = record(a, outdir)
        else:
            exes, trees = find_exes(a)
            info = benchrun.machine_info(trees)
            md, problems, _ = section(a, exes, outdir)
            head = [f'Run of `bench/httpd.py{" --quick" if a.quick else ""}` on {info["date"]}, '
                    f'commit {info["commit"]}.', '',
                    f'Machine: {info["host"]}; {info["os"]}; gcc {info["gcc"]}; {info["go"]}; '
                    f'{out_of_wrk()}; load average at start {info["load"]}' +
                    (f'; servers and wrk in a session of their own at nice {a.nice} '
                     '(`--nice`)' if a.nice is not None else '') + '.', '']
            tail = [f'Load average at the end: '
                    f'{" ".join(f"{x:.2f}" for x in os.getloadavg())}. Raw lines: '
                    f'{os.path.join(outdir, "httpd-raw.txt")}.']
            text = '\n'.join(head + md + tail) + '\n'
            with open(os.path.join(outdir, 'httpd.md'), 'w') as f:
                f.write(text)
            print(text)
    except (HttpdError, benchrun.BenchError, subprocess.CalledProcessError,
            subprocess.TimeoutExpired) as e:
        log(f'bench/httpd.py: error: {e}')
        return 1
    if problems:
        log('bench/httpd.py: error: runs with problems:')
        for m in problems:
            log('  ' + m)
        return 1
    return 0


def out_of_wrk():
    v = benchrun.out_of([wrk_path(), '-v'])
    return v.splitlines()[0].split(' Copyright')[0] if v and v != '?' else 'wrk ?'


if __name__ == '__main__':
    sys.exit(main())
