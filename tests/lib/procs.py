# tests/lib/procs.py - what the python tests ask of /proc: a process's
# children and descendants, its command name and line, whether it still runs.
#
# Invariants: every answer is a snapshot (processes come and go); a pid
#   that does not exist (any more) has no children, no name and is not alive.
# Concurrency: none (reads /proc only).
import os


def children(pid):
    """The live children of pid (of its main thread)."""
    try:
        with open('/proc/%d/task/%d/children' % (pid, pid)) as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def descendants(pid):
    """Every descendant of pid, children of every thread, parents first."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop(0)
        try:
            tasks = os.listdir('/proc/%d/task' % p)
        except OSError:
            continue
        for t in tasks:
            try:
                with open('/proc/%d/task/%s/children' % (p, t)) as f:
                    kids = [int(x) for x in f.read().split()]
            except OSError:
                continue
            out += kids
            todo += kids
    return out


def cmdline(pid):
    """The process's command line, '' once it is gone (it may exit while we look)."""
    try:
        with open('/proc/%d/cmdline' % pid) as f:
            return f.read()
    except OSError:
        return ''


def comm(pid):
    try:
        with open('/proc/%d/comm' % pid) as f:
            return f.read().strip()
    except OSError:
        return ''


def alive(pid):
    """pid exists and is not a zombie."""
    try:
        with open('/proc/%d/stat' % pid) as f:
            return f.read().split(')')[-1].split()[0] != 'Z'
    except OSError:
        return False
