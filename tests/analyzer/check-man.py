#!/usr/bin/env python3
# check-man.py - every `wsr SUBCOMMAND --help` against its man page (TAP).
#
#   check-man.py WSR MANDIR [WSR_VIEW]
#
# --help is printed from the option table the parser reads (analyzer/cli.c),
# so comparing it with docs/man/wsr-SUBCOMMAND.1.scd compares the parser
# with the page: every option of one must be in the other, with the same
# short letter and the same argument name. Also: every subcommand that
# `wsr --help` lists has a page, and wsr(1) names each of them.
# `wsr view --help` needs wsr-view (a build without the viewer skips it).
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'lib'))
from tap import done, ok as tap, skip  # noqa: E402

HELP_OPT = re.compile(r'^  (?:-(\w), |    )--([a-z][a-z-]*)(?: ([A-Z][A-Z_]*))?(?:  |$)')
MAN_OPT = re.compile(r'^\*(?:-(\w)\*, \*)?--([a-z][a-z-]*)\*(?: _([A-Z][A-Z_]*)_)?$')



def help_options(text):
    """The (short, long, ARG) triples of a --help text's options block."""
    opts, inside = set(), False
    for line in text.splitlines():
        if line == 'options:':
            inside = True
            continue
        if inside:
            m = HELP_OPT.match(line)
            if m:
                opts.add((m.group(1) or '', m.group(2), m.group(3) or ''))
            elif not line.startswith('   '):
                inside = False
    return opts


def man_options(path):
    """The (short, long, ARG) triples of a man page's OPTIONS section."""
    opts, inside = set(), False
    for line in open(path):
        line = line.rstrip('\n')
        if line.startswith('# '):
            inside = line == '# OPTIONS'
            continue
        m = MAN_OPT.match(line) if inside else None
        if m:
            opts.add((m.group(1) or '', m.group(2), m.group(3) or ''))
    return opts


def show(opts):
    return ', '.join(sorted(('-%s/' % s if s else '') + '--' + l + (' ' + a if a else '')
                            for s, l, a in opts)) or 'none'


def compare(name, help_text, page):
    h, m = help_options(help_text), man_options(page)
    tap(h and h == m, '%s: --help and %s list the same options (%d)'
        % (name, os.path.basename(page), len(h)),
        'only in --help: %s\nonly in the man page: %s' % (show(h - m), show(m - h)))


def main():
    wsr, mandir = sys.argv[1], sys.argv[2]
    view = sys.argv[3] if len(sys.argv) > 3 else None
    top = subprocess.run([wsr, '--help'], stdout=subprocess.PIPE, text=True)
    tap(top.returncode == 0, 'wsr --help exits 0', top.returncode)
    compare('wsr', top.stdout, os.path.join(mandir, 'wsr.1.scd'))
    subs = re.findall(r'^  ([a-z]+) ', top.stdout.split('subcommands', 1)[-1], re.M)
    tap(len(subs) >= 8, 'wsr --help lists the subcommands', subs)
    wsr_page = open(os.path.join(mandir, 'wsr.1.scd')).read()
    for sub in subs:
        page = os.path.join(mandir, 'wsr-%s.1.scd' % sub)
        tap(os.path.exists(page) and '*wsr-%s*(1)' % sub in wsr_page,
            'wsr %s has a man page and wsr(1) names it' % sub, page)
        if not os.path.exists(page):
            continue
        if sub == 'view' and (view is None or not os.access(view, os.X_OK)):
            skip('wsr view --help and wsr-view.1.scd', 'no wsr-view in this build')
            continue
        r = subprocess.run([wsr, sub, '--help'], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
        tap(r.returncode == 0, 'wsr %s --help exits 0' % sub, r.stderr)
        compare('wsr ' + sub, r.stdout, page)
    return done()


if __name__ == '__main__':
    sys.exit(main())
