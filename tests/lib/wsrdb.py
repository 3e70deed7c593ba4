"""wsrdb.py - opens a wsr trace database for a test, with the wsr_sqlite
extension on the connection: since schema 6 the table `events` is a virtual
table of the module wsr_blocks (docs/schema.md, "Changes in version 6"), and a
connection without it fails with "no such module: wsr_blocks" on every query
that reads events. Every test that reads a database opens it here.

The extension's path is meson's (WSR_SQLITE_EXT in test_env, tests/meson.build).
Python's sqlite3 loads it with enable_load_extension()/load_extension(); a
Python built without loadable-extension support (no enable_load_extension)
gets it through sqlite3_auto_extension() of the libsqlite3 its _sqlite3
module uses, which SQLite then calls on every connection opened afterwards.
"""
import ctypes
import os
import sqlite3

_auto = None  # the extension's handle, once registered as an auto extension


def ext_path():
    """The wsr_sqlite extension meson built (WSR_SQLITE_EXT)."""
    p = os.environ.get('WSR_SQLITE_EXT')
    if not p:
        raise RuntimeError('WSR_SQLITE_EXT is not set: run the test through meson test')
    return p


def _register_auto():
    global _auto
    if _auto is not None:
        return
    ext = ctypes.CDLL(ext_path())
    lib = ctypes.CDLL('libsqlite3.so.0')
    lib.sqlite3_auto_extension.argtypes = [ctypes.c_void_p]
    init = ctypes.cast(ext.sqlite3_wsrsqlite_init, ctypes.c_void_p)
    if lib.sqlite3_auto_extension(init) != 0:
        raise RuntimeError('sqlite3_auto_extension failed for %s' % ext_path())
    _auto = ext


def connect(path, ro=False, **kw):
    """sqlite3.connect(path) (ro: read-only, by URI) with wsr_blocks registered."""
    if not hasattr(sqlite3.Connection, 'enable_load_extension'):
        _register_auto()
    if ro:
        kw['uri'] = True
        path = 'file:%s?mode=ro' % path
    c = sqlite3.connect(path, **kw)
    if hasattr(c, 'enable_load_extension'):
        c.enable_load_extension(True)
        try:
            c.load_extension(ext_path())
        finally:
            c.enable_load_extension(False)
    return c
