#!/usr/bin/env python3
# test_ci_recipe.py - runs the CI recipes of docs/ci.md (examples/ci/github-workflow.yml and
# examples/ci/gitlab-ci.yml) on their sample program, here, without the CI services.
#
# Usage: test_ci_recipe.py SOURCE_ROOT     (TAP on stdout; exit 0 pass, 1 fail)
#
# What it does: reads each YAML file (python3-yaml), takes the recipe's own shell commands
# (GitHub: each step's `run:`, GitLab: `before_script:` and `script:`) and runs them with
# bash as the services do (`bash --noprofile --norc -eo pipefail`; GitLab joins a section's
# lines into one script), in a temporary directory laid out as the user's repository:
# app.c (examples/ci/app.c), ci/wsr-gate.jq, and ci/wsr-baseline.db when the case has one.
# Three cases per recipe: no baseline (the gate warns and passes), a baseline recorded from
# the same program (passes), and one recorded from `./app 40`, a tenth of the Gs (the gate
# against the baseline fails with exit 1). Each checks the exit status of every step, the
# markdown report in the job summary (GitHub: $GITHUB_STEP_SUMMARY pointed at a temporary
# file; GitLab: wsr-out/report.md), and that every artifact and junit file the YAML declares
# exists (and the junit file parses).
#
# What it does not run, and checks instead:
#   - the Debian packages (apt-get needs root and the network): every package the recipe
#     names must be installed here (dpkg-query), so each name is a real Debian package;
#   - the fetch of wsr (git clone needs the network): WSR_SRC points at this source tree;
#   - GitHub's `uses:` actions (actions/checkout, upload-artifact, action-junit-report):
#     their inputs (the artifact paths, the junit file) are checked as said above;
#   - GitLab's build of wsr: its lines must be the same commands as GitHub's "Build and
#     install wsr" step, which did run (into a temporary WSR_PREFIX); it is not built twice.
#   - Every `wsr SUBCOMMAND --option` the recipes use must appear in `wsr SUBCOMMAND --help`.
#   - The YAML shown in docs/ci.md must be these files, byte for byte.
# Invariants: nothing outside the temporary directory is written (WSR_PREFIX is in it); a
#   step that fails when the case expects success fails the test with its output.
# Concurrency: one case at a time (each `wsr run` starts a session daemon if none runs).
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.dom.minidom

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'lib'))
from tap import done, note, ok  # noqa: E402

try:
    import yaml
except ImportError:
    yaml = None

STEP_TIMEOUT = 1200  # the build of wsr on a loaded 2-core machine takes about 4 min
PROVISION = ('Install the Debian packages', 'Fetch wsr', 'Build and install wsr')


def sh(script, cwd, env, label):
    """Runs script as a CI service's bash step; (exit status, output)."""
    with tempfile.NamedTemporaryFile('w', suffix='.sh', delete=False) as f:
        f.write(script)
    try:
        p = subprocess.run(['bash', '--noprofile', '--norc', '-eo', 'pipefail', f.name],
                           cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, timeout=STEP_TIMEOUT)
        return p.returncode, p.stdout
    except subprocess.TimeoutExpired as e:
        return None, '%s: no end after %d s\n%s' % (label, STEP_TIMEOUT, e.output or '')
    finally:
        os.unlink(f.name)


def apt_packages(script):
    """The package names of the `apt-get install` command in script."""
    joined = script.replace('\\\n', ' ')
    m = re.search(r'apt-get install([^\n]*)', joined)
    words = m.group(1).split() if m else []
    return [w for w in words if not w.startswith('-')]


def check_packages(label, script):
    pkgs = apt_packages(script)
    missing = []
    for p in pkgs:
        r = subprocess.run(['dpkg-query', '-W', '-f=${Status}', p], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True)
        if 'install ok installed' not in r.stdout:
            missing.append(p)
    ok(pkgs and not missing, '%s: the %d Debian packages it installs exist (installed here)'
       % (label, len(pkgs)), 'not installed: %s' % ' '.join(missing))


def wsr_options(text):
    """(subcommand, option) for each `wsr SUB ... --opt` of text, up to a pipe or ;."""
    found = set()
    for line in text.replace('\\\n', ' ').splitlines():
        for m in re.finditer(r'(?:^|[\s;&|(])wsr (\w+)([^|;&]*)', line):
            sub = m.group(1)
            args = m.group(2).split(' -- ')[0]
            for o in re.findall(r'(?:^|\s)(--?[a-z][a-z-]*)', args):
                found.add((sub, o))
    return found


def check_options(wsr, label, text):
    bad = []
    used = sorted(wsr_options(text))
    for sub, opt in used:
        r = subprocess.run([wsr, sub, '--help'], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        if not re.search(r'(^|[\s\[|,])%s\b' % re.escape(opt), r.stdout):
            bad.append('wsr %s %s' % (sub, opt))
    ok(used and not bad, '%s: the %d wsr options it uses are each in the --help of their '
       'subcommand' % (label, len(used)), '\n'.join(bad))


def layout(src, ws, baseline):
    os.makedirs(os.path.join(ws, 'ci'))
    shutil.copy(os.path.join(src, 'examples', 'ci', 'app.c'), ws)
    shutil.copy(os.path.join(src, 'examples', 'ci', 'wsr-gate.jq'), os.path.join(ws, 'ci'))
    if baseline:
        shutil.copy(baseline, os.path.join(ws, 'ci', 'wsr-baseline.db'))


def record_baseline(env, tmp, app_dir, args, name):
    """A baseline database of APP_DIR/app ARGS, recorded with the recipes' wsr run options."""
    d = os.path.join(tmp, name)
    os.makedirs(d)
    shutil.copy(os.path.join(app_dir, 'app'), d)
    r = subprocess.run(['wsr', 'run', '--lossless', '--subbuf-size', '1M', '--num-subbuf', '4',
                        '--out', 't', '--', './app'] + args, cwd=d, env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    db = os.path.join(d, 't', 'trace.db')
    ok(r.returncode == 0 and os.path.exists(db),
       'baseline of ./app %s recorded' % ' '.join(args), r.stdout[-1500:])
    return db


def expand(value):
    """A YAML env value as text; None for a GitHub expression (`${{ vars.X }}`), which
    only the service can evaluate (WSR_REPO, WSR_REF: used by the fetch, not run here)."""
    if not isinstance(value, str):
        return str(value)
    if '${{' in value:
        return None
    return value


def check_files(label, ws, paths):
    missing = [p for p in paths if not os.path.exists(os.path.join(ws, p))]
    ok(paths and not missing, '%s: the %d artifact files it keeps exist' % (label, len(paths)),
       'missing: %s' % ' '.join(missing))


def check_junit(label, path):
    try:
        doc = xml.dom.minidom.parse(path)
        n = len(doc.getElementsByTagName('testcase'))
    except Exception as e:  # noqa: BLE001  (any parse error is the failure)
        n, err = 0, str(e)
    else:
        err = ''
    ok(n > 0, '%s: the junit file parses, %d test cases' % (label, n), err)


# ---- GitHub Actions --------------------------------------------------------------------

def github(src, tmp, wf, cases, state):
    """Runs the workflow's run: steps for each case; returns the environment that finds the
    installed wsr (for the GitLab job) or None."""
    job = next(iter(wf['jobs'].values()))
    steps = job['steps']
    base_env = dict(os.environ)
    for k, v in job.get('env', {}).items():
        e = expand(v)
        if e is not None:
            base_env[k] = e
    prefix = os.path.join(tmp, 'prefix')
    base_env['WSR_SRC'] = src
    base_env['WSR_PREFIX'] = prefix
    install = [s for s in steps if s.get('name') == 'Install the Debian packages']
    check_packages('github', install[0]['run'] if install else '')
    inst_env = None
    for case, baseline, want_gate in cases:
        label = 'github (%s)' % case
        ws = os.path.join(tmp, 'gh-' + case.replace(' ', '-'))
        layout(src, ws, baseline(inst_env) if baseline else None)
        env = dict(inst_env or base_env)
        summary = os.path.join(ws, '..', 'gh-%s-summary.md' % case.replace(' ', '-'))
        open(summary, 'w').close()
        env['GITHUB_STEP_SUMMARY'] = summary
        failed = False
        gate_out = ''
        for s in steps:
            name = s.get('name', s.get('uses', '?'))
            cond = s.get('if')
            if cond not in (None, 'always()'):
                ok(False, '%s: step "%s": a condition this test knows' % (label, name), cond)
                continue
            if failed and cond != 'always()':
                continue  # as the service skips it after a failed step
            if 'uses' in s:
                w = s.get('with', {})
                if 'upload-artifact' in s['uses']:
                    check_files(label, ws, w['path'].split())
                elif 'junit' in s['uses']:
                    check_junit(label, os.path.join(ws, w['report_paths']))
                continue
            if name in ('Install the Debian packages', 'Fetch wsr'):
                continue
            if name == 'Build and install wsr':
                if inst_env is not None:
                    continue  # installed by the first case, into the same prefix
                rc, out = sh(s['run'], ws, env, name)
                ok(rc == 0, '%s: step "%s" exits 0' % (label, name), out[-3000:])
                pcs = glob.glob(os.path.join(prefix, '**', 'pkgconfig', 'wsr.pc'), recursive=True)
                if rc != 0 or not pcs:
                    return None
                inst_env = dict(env)
                inst_env['PATH'] = os.path.join(prefix, 'bin') + ':' + env['PATH']
                inst_env['PKG_CONFIG_PATH'] = os.path.dirname(pcs[0])
                env.update(inst_env)
                continue
            rc, out = sh(s['run'], ws, env, name)
            want = want_gate if name == 'Gate against the baseline' else 0
            ok(rc == want, '%s: step "%s" exits %d' % (label, name, want),
               'exit %s\n%s' % (rc, out[-3000:]))
            if name == 'Gate against the baseline':
                gate_out = out
            if rc != 0:
                failed = True
        if inst_env is None:
            return None
        state['app_dir'] = state.get('app_dir', ws)
        state['db'] = state.get('db', os.path.join(ws, job['env']['WSR_DB']))
        text = open(summary).read()
        ok(text.startswith('## wsr report: app\n'),
           '%s: the markdown report is in the job summary' % label, text[:500])
        if baseline:
            ok('\n| metric | base | new | delta | delta % |\n' in text,
               '%s: the diff against the baseline is in the job summary' % label, text[-800:])
            ok(('wsr gate: FAIL: ' in gate_out) == (want_gate != 0),
               '%s: the gate says %s' % (label, 'FAIL' if want_gate else 'no regression'),
               gate_out[-1000:])
        else:
            ok('::warning::no ci/wsr-baseline.db' in gate_out,
               '%s: without a baseline the gate warns and passes' % label, gate_out[-500:])
    return inst_env


# ---- GitLab CI -------------------------------------------------------------------------

def gitlab(src, tmp, gl, wf, inst_env, cases):
    job = gl['wsr']
    gh_job = next(iter(wf['jobs'].values()))
    before = job['before_script']
    check_packages('gitlab', '\n'.join(c for c in before if 'apt-get install' in c))
    clone = [c for c in before if c.startswith('git clone')]
    build = [c for c in before if not c.startswith(('apt-get', 'DEBIAN_FRONTEND', 'git clone'))]
    gh_build = [s['run'] for s in gh_job['steps'] if s.get('name') == 'Build and install wsr']
    gh_cmds = gh_build[0].replace('\\\n', ' ').strip().split('\n') if gh_build else []
    norm = [' '.join(c.split()) for c in build]
    gh_norm = [' '.join(c.split()) for c in gh_cmds]
    ok(len(clone) == 1 and norm == gh_norm,
       'gitlab: before_script fetches wsr and builds it with the GitHub step\'s commands',
       'gitlab: %s\ngithub: %s' % (norm, gh_norm))
    for case, baseline, want in cases:
        label = 'gitlab (%s)' % case
        ws = os.path.join(tmp, 'gl-' + case.replace(' ', '-'))
        layout(src, ws, baseline(inst_env) if baseline else None)
        env = dict(inst_env)
        env.pop('GITHUB_STEP_SUMMARY', None)
        for k, v in job.get('variables', {}).items():
            if k not in ('WSR_SRC', 'WSR_PREFIX'):
                env[k] = str(v)
        rc, out = sh('\n'.join(job['script']) + '\n', ws, env, 'script')
        ok(rc == want, '%s: the script exits %d' % (label, want), 'exit %s\n%s' % (
            rc, out[-3000:]))
        art = job['artifacts']
        ok(art.get('when') == 'always', '%s: artifacts are kept when the job fails' % label)
        check_files(label, ws, art['paths'])
        check_junit(label, os.path.join(ws, art['reports']['junit']))
        md = os.path.join(ws, 'wsr-out', 'report.md')
        ok(os.path.exists(md) and open(md).read().startswith('## wsr report: app\n'),
           '%s: the markdown report is an artifact' % label)
        if baseline:
            ok(('wsr gate: FAIL: ' in out) == (want != 0), '%s: the gate says %s' % (
                label, 'FAIL' if want else 'no regression'), out[-1000:])


def doc_blocks(src):
    """The ```yaml blocks of docs/ci.md (none if it is missing)."""
    p = os.path.join(src, 'docs', 'ci.md')
    if not os.path.exists(p):
        return []
    with open(p) as f:
        return re.findall(r'^```yaml\n(.*?)^```$', f.read(), re.M | re.S)


def main():
    if len(sys.argv) != 2:
        print('usage: test_ci_recipe.py SOURCE_ROOT', file=sys.stderr)
        return 2
    src = os.path.abspath(sys.argv[1])
    if yaml is None:
        ok(False, 'python3-yaml is installed (apt-get install python3-yaml)')
        return done()
    files = {n: os.path.join(src, 'examples', 'ci', n) for n in (
        'github-workflow.yml', 'gitlab-ci.yml', 'wsr-gate.jq')}
    texts = {n: open(p).read() for n, p in files.items()}
    blocks = doc_blocks(src)
    for n in ('github-workflow.yml', 'gitlab-ci.yml'):
        ok(texts[n] in blocks, 'docs/ci.md shows examples/ci/%s as it is' % n)
    wf = yaml.safe_load(texts['github-workflow.yml'])
    gl = yaml.safe_load(texts['gitlab-ci.yml'])
    tmp = tempfile.mkdtemp(prefix='wsr-ci-')
    try:
        # The first case (no baseline) leaves its app and trace.db in state: the trace.db
        # is the baseline a user would download from a good run and commit.
        state = {}

        def same(env):
            return state['db']

        def smaller(env):
            if 'small' not in state:
                state['small'] = record_baseline(env, tmp, state['app_dir'], ['40'], 'base-small')
            return state['small']
        cases = [('no baseline', None, 0), ('same program', same, 0),
                 ('a tenth of the Gs', smaller, 1)]
        inst_env = github(src, tmp, wf, cases, state)
        if inst_env is None:
            ok(False, 'wsr built and installed by the GitHub recipe: the GitLab job not run')
            return done()
        wsr = os.path.join(tmp, 'prefix', 'bin', 'wsr')
        check_options(wsr, 'github', texts['github-workflow.yml'])
        check_options(wsr, 'gitlab', texts['gitlab-ci.yml'])
        gitlab(src, tmp, gl, wf, inst_env, cases)
    finally:
        if os.environ.get('WSR_KEEP_TMP'):
            note('kept %s' % tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return done()


if __name__ == '__main__':
    sys.exit(main())
