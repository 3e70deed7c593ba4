# lttngd.py - the LTTng session daemon, shared by the tests and by `wsr run`.
#
# Tests that record (lttrec.py, test_run.py, fidelity.py) run beside each other
# and beside `wsr run`s, and all of them use the machine's one root session
# daemon. They follow the protocol of `wsr run` (analyzer/record/record.c,
# record_daemon_acquire/release; docs/recording.md, step 1), so that none stops
# the daemon under another's recording:
#   - a user holds a shared flock on RUNDIR/wsr-run.lock from before it looks
#     for a daemon until its last session is destroyed;
#   - whoever starts the daemon does it holding RUNDIR/wsr-run.start exclusively,
#     after looking for one again, and writes its pid into the lock file;
#   - at the end, a user tries to take the lock exclusively without waiting:
#     only the last user gets it, and it stops the daemon that the file names
#     if that is still the running daemon and it holds no session.
# Concurrency: one SharedDaemon per use; safe across processes (the flock). The
# lock file descriptor is close-on-exec: children never hold the lock.
import fcntl
import os
import signal
import subprocess
import time


def rundir():
    if os.geteuid() == 0:
        return '/var/run/lttng'
    return os.path.join(os.environ.get('LTTNG_HOME') or os.environ['HOME'], '.lttng')


def reachable():
    return subprocess.run(['lttng', 'list'], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode == 0


def daemon_pid():
    """The running daemon's pid (its pid file), or None."""
    try:
        with open(os.path.join(rundir(), 'lttng-sessiond.pid')) as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None


def lock_path():
    return os.path.join(rundir(), 'wsr-run.lock')


def _comm(pid):
    try:
        with open('/proc/%d/comm' % pid) as f:
            return f.read()
    except OSError:
        return ''


def _is_sessiond(pid):
    return _comm(pid).startswith('lttng-sessiond')


def _children(pid):
    """The pids whose parent is pid (a daemon's consumer daemons), read before it is killed."""
    out = []
    for d in os.listdir('/proc'):
        if d.isdigit():
            try:
                with open('/proc/%s/stat' % d) as f:
                    fields = f.read().rsplit(')', 1)[1].split()
            except (OSError, IndexError):
                continue
            if int(fields[1]) == pid:
                out.append(int(d))
    return out


def _gone(pid, seconds):
    """Whether the daemon pid is gone within seconds."""
    for _ in range(int(seconds * 20) + 1):
        if not _is_sessiond(pid):
            return True
        time.sleep(0.05)
    return False


def _holds_sessions():
    r = subprocess.run(['lttng', '--mi', 'xml', 'list'], stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL, text=True)
    return r.returncode != 0 or '<session>' in r.stdout


class SharedDaemon:
    """A share of the session daemon: starts one if none answers; the last user stops it."""

    def __enter__(self):
        self.acquire()
        return self

    def __exit__(self, *exc):
        self.release()

    def acquire(self):
        os.makedirs(rundir(), mode=0o755 if os.geteuid() == 0 else 0o700, exist_ok=True)
        self.fd = os.open(lock_path(), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        deadline = time.monotonic() + 30  # an exclusive holder stops a daemon: 10 s at most
        while True:
            try:
                fcntl.flock(self.fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise RuntimeError('%s stayed locked for 30 s' % lock_path())
                time.sleep(0.05)
        self.started = None
        if reachable():
            return
        # Two users that both found no daemon must not both start one (record.c,
        # start_serialized): the second waits for the first and finds its daemon.
        sfd = os.open(os.path.join(rundir(), 'wsr-run.start'), os.O_RDWR | os.O_CREAT |
                      os.O_CLOEXEC, 0o644)
        try:
            for _ in range(600):
                try:
                    fcntl.flock(sfd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    time.sleep(0.05)
            if reachable():
                return
            self._start()
        finally:
            os.close(sfd)

    def _start(self):
        r = subprocess.run(['lttng-sessiond', '--daemonize'], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
        for _ in range(100):  # another user may have won the race to start it
            if reachable():
                break
            time.sleep(0.1)
        else:
            raise RuntimeError('no lttng session daemon reachable (lttng-sessiond exit %d)'
                               % r.returncode)
        if r.returncode == 0:
            self.started = daemon_pid()
        if self.started:
            os.ftruncate(self.fd, 0)
            os.pwrite(self.fd, b'%d\n' % self.started, 0)

    def release(self):
        if getattr(self, 'fd', None) is None:
            return
        try:
            # Not the last user: the conversion drops our shared lock either way.
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(self.fd)
            self.fd = None
            return
        try:
            named = int(os.pread(self.fd, 64, 0).decode().strip() or 0)
        except ValueError:
            named = 0
        if named and named == daemon_pid() and _is_sessiond(named) and not _holds_sessions():
            kids = _children(named)
            os.kill(named, signal.SIGTERM)
            if not _gone(named, 10):
                # A daemon whose consumer waits for a sub-buffer that a killed program
                # never committed never finishes its teardown (record.c,
                # record_sessiond_stop): kill it and its consumer daemons.
                os.kill(named, signal.SIGKILL)
                for k in kids:
                    if _comm(k).startswith('lttng-consumerd'):
                        os.kill(k, signal.SIGKILL)
                _gone(named, 2)
            os.ftruncate(self.fd, 0)
        elif named and (named != daemon_pid() or not _is_sessiond(named)):
            os.ftruncate(self.fd, 0)  # stale
        os.close(self.fd)
        self.fd = None
