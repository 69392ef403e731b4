# A small stand-in for RT-Thread's tools/building.py, written for the tests:
# just the functions a package SConscript calls, with the same meaning.
#
#   GetCurrentDir()      the folder of the SConscript being read (its source
#                        folder, also under a variant_dir)
#   GetDepend(x)         True when x (a name or a list of names) is defined in
#                        rtconfig.h; for one name with a value, that value
#   GetConfigValue(name) the value of a macro of rtconfig.h ('' when unset)
#   DefineGroup(...)     records its arguments (JSON) instead of compiling
#
# rtconfig.h is given as a JSON dict (name -> value, "" for a bare #define,
# strings keep their quotes as in RT-Thread's preprocessor) in the file named
# by $RTT_STANDIN_CONFIG. DefineGroup appends to the JSON list in
# $RTT_STANDIN_RECORD.
import json
import os

from SCons.Script import *  # noqa: F401,F403  (RT-Thread's building.py does the same)
from SCons.Script import File, Glob  # noqa: F401

BuildOptions = {}
Env = None


def PrepareBuilding(env):
    global Env
    Env = env
    BuildOptions.clear()
    path = os.environ.get('RTT_STANDIN_CONFIG')
    if path:
        with open(path) as f:
            BuildOptions.update(json.load(f))
    return []


def GetCurrentDir():
    conscript = File('SConscript')
    return os.path.dirname(conscript.rfile().abspath)


def GetDepend(depend):
    if isinstance(depend, str):
        if depend not in BuildOptions or BuildOptions[depend] == 0:
            return False
        if BuildOptions[depend] != '':
            return BuildOptions[depend]
        return True
    for item in depend:
        if item != '' and (item not in BuildOptions or BuildOptions[item] == 0):
            return False
    return True


def GetConfigValue(name):
    assert isinstance(name, str), 'GetConfigValue: only string parameter is valid'
    return BuildOptions.get(name, '')


def _path_of(item, cwd):
    if hasattr(item, 'srcnode'):
        return item.srcnode().abspath
    item = str(item)
    return item if os.path.isabs(item) else os.path.join(cwd, item)


def DefineGroup(name, src, depend, **parameters):
    cwd = GetCurrentDir()
    record = {
        'name': name,
        'cwd': cwd,
        'depend': depend,
        'built': bool(GetDepend(depend)),
        'src': sorted(_path_of(s, cwd) for s in src),
        'parameters': {k: [str(x) for x in v] if isinstance(v, (list, tuple)) else str(v)
                       for k, v in parameters.items()},
    }
    path = os.environ.get('RTT_STANDIN_RECORD')
    if path:
        records = []
        if os.path.exists(path):
            with open(path) as f:
                records = json.load(f)
        records.append(record)
        with open(path, 'w') as f:
            json.dump(records, f, indent=1)
    return [] if not record['built'] else list(src)
