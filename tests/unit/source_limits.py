#!/usr/bin/env python3
"""source-limits: no C source file under analyzer/ or viewer/ over 1,000 lines,
no function there over 150 (issue 18's size limits).

A function is counted from the line of its opening brace to the line of its
closing brace at column 0, both included. The code here is K&R: a function's
opening brace sits alone at column 0 under its declarator, and braces of
blocks inside a function are indented; an opening brace at the end of a
column-0 declarator line (`int f(void) {`) is also accepted. Column-0 braces
that open a struct, union, enum or initializer (`= {`) are not functions;
the same goes for a declarator without a parameter list.

Usage: source_limits.py SRCROOT   (checks SRCROOT/analyzer and SRCROOT/viewer)
       source_limits.py --files F...   (checks the given files only)
Exit status 1 and one line per breach when a limit is exceeded.
"""
import os
import re
import sys

MAX_FILE_LINES = 1000
MAX_FUNC_LINES = 150
DIRS = ('analyzer', 'viewer')

NOT_FUNC = re.compile(r'^\s*(typedef\b|struct\b|union\b|enum\b)')
IDENT_CALL = re.compile(r'([A-Za-z_]\w*)\s*\(')


def _declarator(lines, i):
    """The text of the declarator that ends at line i (the brace's line, or
    the line before it), back to the previous blank line, preprocessor line,
    `;` or column-0 `}`."""
    parts = []
    k = i
    while k >= 0:
        s = lines[k]
        if k != i and (not s.strip() or s.lstrip().startswith('#')
                       or s.rstrip().endswith(';') or s.startswith('}')
                       or s.rstrip().endswith('*/')):
            break
        parts.append(s)
        k -= 1
    return ' '.join(reversed(parts))


def functions(text):
    """Yield (name, first_line, n_lines) for each function body in text."""
    lines = text.split('\n')
    i = 0
    while i < len(lines):
        s = lines[i]
        opens = None
        if s.rstrip() == '{' and i > 0:
            opens = _declarator(lines, i - 1)
        elif (s[:1].isalpha() or s[:1] == '_') and s.rstrip().endswith('{'):
            opens = _declarator(lines, i)[:-1]
        if opens is not None and '(' in opens and '=' not in opens.split('(')[0] \
                and not NOT_FUNC.match(opens) and not opens.rstrip().endswith('='):
            j = i + 1
            while j < len(lines) and not lines[j].startswith('}'):
                j += 1
            names = IDENT_CALL.findall(opens.split(')')[0] + ')')
            name = names[0] if names else opens.strip()[:40]
            yield name, i + 1, j - i + 1
            i = j
        i += 1


def check_file(path, display):
    breaches = []
    with open(path, encoding='utf-8', errors='replace') as f:
        text = f.read()
    n = text.count('\n') + (0 if text.endswith('\n') or not text else 1)
    if n > MAX_FILE_LINES:
        breaches.append(f'{display}: {n} lines (limit {MAX_FILE_LINES})')
    for name, line, length in functions(text):
        if length > MAX_FUNC_LINES:
            breaches.append(f'{display}:{line}: {name}() is {length} lines '
                            f'(limit {MAX_FUNC_LINES})')
    return breaches


def self_check():
    """The counter against known shapes, so that a broken counter cannot pass
    the tree silently."""
    body = ['\tx++;'] * 149
    kr = 'static int\nf(int a,\n  int b)\n{\n' + '\n'.join(body) + '\n}\n'
    same = 'int g(void) {\n' + '\n'.join(body) + '\n}\n'
    nested = 'void h(void)\n{\n\tif (a) {\n\t\tb();\n\t}\n}\n'
    other = ('static const struct s t[] = {\n\t{ 1 },\n};\nstruct u\n{\n\tint a;\n};\n'
             'enum e\n{\n\tA,\n};\n')
    got = list(functions(kr + same + nested + other))
    want = [('f', 4, 151), ('g', 155, 151), ('h', 307, 5)]
    if got != want:
        sys.exit(f'source-limits: self-check failed: counted {got}, want {want}')


def main(argv):
    self_check()
    if len(argv) >= 2 and argv[1] == '--files':
        files = [(p, p) for p in argv[2:]]
    elif len(argv) == 2:
        root = argv[1]
        files = []
        for d in DIRS:
            for dirpath, dirnames, filenames in os.walk(os.path.join(root, d)):
                dirnames.sort()
                for fn in sorted(filenames):
                    if fn.endswith(('.c', '.h')):
                        p = os.path.join(dirpath, fn)
                        files.append((p, os.path.relpath(p, root)))
        if not files:
            sys.exit(f'source-limits: no .c/.h files under {root}/{{{",".join(DIRS)}}}')
    else:
        sys.exit(__doc__.split('\n\n')[-2])
    breaches = []
    for p, display in files:
        breaches += check_file(p, display)
    for b in breaches:
        print(b)
    print(f'source-limits: {len(files)} files, {len(breaches)} over the limits')
    return 1 if breaches else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
