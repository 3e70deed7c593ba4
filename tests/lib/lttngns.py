#!/usr/bin/env python3
# lttngns.py - runs one test with an LTTng of its own: in a mount namespace where the
# session daemon's run directory (/var/run/lttng), /dev/shm and LTTNG_HOME are empty
# directories of its own, so the daemon it starts, wedges or must not find is not the
# machine's one daemon that the other recording tests share (tests/lib/lttngd.py).
#
# Usage: lttngns.py --check          exit 0 when this machine allows it (meson asks once)
#        lttngns.py CMD [ARGS...]    run CMD so; its exit status
#
# Why: as root, LTTng has one session daemon per machine (its sockets are in
# /var/run/lttng), and a few tests cannot share it: crash-midwrite-kill wedges it, the
# wsr-run sessiond and shared-daemon cases must find none, and analyzer-cli's `wsr run`
# destroys stale sessions that another test's run would destroy first. Without a daemon
# of their own they ran alone (about 80 s of the suite's time); with one they run beside
# the others. meson.build falls back to running them alone where --check fails (no
# CAP_SYS_ADMIN, as in an unprivileged container).
#
# Invariants: nothing the command starts outlives it: when it ends (or this is sent
#   SIGTERM), every process left in its mount namespace (the daemon it started, its
#   consumer daemons) is killed, and the namespace's mounts go with the namespace. The
#   machine's /var/run/lttng, /dev/shm and daemon are never touched.
# Concurrency: each call has its own namespace; any number run at once.
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

INSIDE = 'WSR_LTTNGNS_INSIDE'
RUNDIR = '/var/run/lttng'


def mount_private():
    os.makedirs(RUNDIR, mode=0o755, exist_ok=True)
    for target, mode in ((RUNDIR, '0755'), ('/dev/shm', '1777')):
        subprocess.run(['mount', '-t', 'tmpfs', '-o', 'mode=' + mode, 'wsr-lttngns', target],
                       check=True)


def mnt_ns(pid):
    try:
        return os.readlink('/proc/%s/ns/mnt' % pid)
    except OSError:
        return None


def kill_leftovers():
    """SIGKILL every other process of this mount namespace until none is left (10 s)."""
    me, ns = os.getpid(), mnt_ns('self')
    for _ in range(200):
        left = [int(d) for d in os.listdir('/proc')
                if d.isdigit() and int(d) != me and mnt_ns(d) == ns]
        if not left:
            return True
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.05)
    return False


def inside(argv):
    # meson ends a test that outruns its timeout with SIGTERM to its process group: the
    # daemon that the test started has left that group, so it is killed here too.
    def terminated(signum, frame):
        raise SystemExit(128 + signum)
    signal.signal(signal.SIGTERM, terminated)
    mount_private()
    home = tempfile.mkdtemp(prefix='wsr-lttngns-home-')
    env = dict(os.environ, LTTNG_HOME=home)
    env.pop(INSIDE, None)
    try:
        rc = subprocess.run(argv, env=env).returncode
    finally:
        if not kill_leftovers():
            print('lttngns: processes of the namespace outlived SIGKILL', file=sys.stderr)
            rc = 1
        shutil.rmtree(home, ignore_errors=True)
    return rc if rc >= 0 else 128 - rc


def main():
    argv = sys.argv[1:]
    if not argv:
        print('usage: lttngns.py --check | CMD [ARGS...]', file=sys.stderr)
        return 2
    if os.environ.get(INSIDE) == '1':
        if argv == ['--check']:
            mount_private()
            return 0
        return inside(argv)
    env = dict(os.environ, **{INSIDE: '1'})
    try:
        return subprocess.run(['unshare', '--mount', '--propagation', 'private',
                               sys.executable, os.path.abspath(__file__)] + argv,
                              env=env, stderr=subprocess.DEVNULL if argv == ['--check']
                              else None).returncode
    except OSError as e:
        print('lttngns: unshare: %s' % e, file=sys.stderr)
        return 1


if __name__ == '__main__':
    sys.exit(main())
