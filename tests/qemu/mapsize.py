"""What the package adds to the firmware, from GNU ld's map file (std lib
only): the sizes of the input sections the linker kept, by the object they
came from. Flash is text (code, unwind tables) + rodata + data (the
initialised data's load image); bss is RAM only."""
import re
import sys

GROUPS = (
    ('package: Rust library (librtt_agent.a, incl. its compiler_builtins)', lambda o: 'librtt_agent.a' in o),
    ('package: C glue, tools, tool_func.c', lambda o: 'Agent-latest/' in o),
    ('cJSON (dependency)', lambda o: 'cJSON' in o),
    ('webclient (dependency)', lambda o: 'webclient' in o),
    ('WebNet (dependency)', lambda o: '/webnet-v' in o),
    ('mbedtls (dependency)', lambda o: '/mbedtls-v' in o),
)
# Listed only when the firmware has them.
OPTIONAL = ('WebNet (dependency)', 'mbedtls (dependency)')
# Every input section kept, whatever its object (the firmware's flash).
ALL = '*all*'
# Parts of the package counted again on their own (by section name, which
# for Rust is the mangled symbol: -ffunction-sections), listed when the
# firmware has them. Code of shared helpers they call (JSON writers, cJSON
# glue) is not in them, nor Rust's rodata (unnamed sections): the
# firmware without the part is the exact comparison.
PARTS = (
    # rtt_agent::abilities::mcp_server is the server, rtt_agent::abilities::mcp_client
    # the client (mangled `9abilities10mcp_server` and `9abilities10mcp_client`).
    ('of which the MCP server\'s code (rtt_agent::abilities::mcp_server, agent_mcp_socket.c)',
     lambda sec, obj: ('librtt_agent.a' in obj and '9abilities10mcp_server' in sec)
     or obj.endswith('glue/agent_mcp_socket.o')),
    ('of which the MCP client\'s code (rtt_agent::abilities::mcp_client, agent_mcp_client.c)',
     lambda sec, obj: ('librtt_agent.a' in obj and '9abilities10mcp_client' in sec)
     or obj.endswith('glue/agent_mcp_client.o')),
)


def kind(section):
    s = section.lstrip('.')
    if s.startswith(('text', 'ARM.ex', 'glue', 'init', 'fini')):
        return 'text'
    if s.startswith('rodata'):
        return 'rodata'
    if s.startswith('data'):
        return 'data'
    if s.startswith('bss') or section == 'COMMON':
        return 'bss'
    return None


def sizes(path, extra=()):
    """{group: {text, rodata, data, bss}}; `extra`: more (name,
    match(section, object)) counted as PARTS are."""
    parts = PARTS + tuple(extra)
    out = {g: {'text': 0, 'rodata': 0, 'data': 0, 'bss': 0} for g, _ in GROUPS + parts + ((ALL, None),)}
    with open(path, errors='replace') as f:
        lines = f.read().splitlines()
    try:
        start = lines.index('Linker script and memory map')
    except ValueError:
        raise SystemExit('%s: not a GNU ld map file' % path)
    pending = None
    entry = re.compile(r'^ (\S+)\s+0x([0-9a-fA-F]+)\s+0x([0-9a-fA-F]+)\s+(\S.*)$')
    cont = re.compile(r'^\s+0x([0-9a-fA-F]+)\s+0x([0-9a-fA-F]+)\s+(\S.*)$')
    for line in lines[start:]:
        m = entry.match(line)
        if m:
            sec, size, obj = m.group(1), int(m.group(3), 16), m.group(4)
            pending = None
        else:
            m2 = cont.match(line) if pending else None
            if m2:
                sec, size, obj = pending, int(m2.group(2), 16), m2.group(3)
                pending = None
            else:
                m3 = re.match(r'^ (\.\S+|COMMON)\s*$', line)
                pending = m3.group(1) if m3 else None
                continue
        k = kind(sec)
        if not k or size == 0:
            continue
        out[ALL][k] += size
        for g, match in GROUPS:
            if match(obj):
                out[g][k] += size
                break
        for g, match in parts:
            if match(sec, obj):
                out[g][k] += size
    return out


def rows(path):
    try:
        s = sizes(path)
    except OSError as e:
        return [('flash (map file)', 'unavailable: %s' % e)]
    r = []
    total = {'text': 0, 'rodata': 0, 'data': 0, 'bss': 0}
    for g, _ in GROUPS:
        v = s[g]
        flash = v['text'] + v['rodata'] + v['data']
        if g in OPTIONAL and flash + v['bss'] == 0:
            continue
        if g.startswith('package'):
            for k in total:
                total[k] += v[k]
        r.append(('flash %s' % g, '%d bytes (text %d, rodata %d, data %d; bss %d)'
                  % (flash, v['text'], v['rodata'], v['data'], v['bss'])))
    for g, _ in PARTS:
        v = s[g]
        flash = v['text'] + v['rodata'] + v['data']
        if flash + v['bss']:
            r.append(('flash %s' % g, '%d bytes (text %d, rodata %d, data %d; bss %d)'
                      % (flash, v['text'], v['rodata'], v['data'], v['bss'])))
    flash = total['text'] + total['rodata'] + total['data']
    r.insert(0, ('flash the package adds (rtthread.map)', '%d bytes (text %d, rodata %d, data %d; bss %d)'
                 % (flash, total['text'], total['rodata'], total['data'], total['bss'])))
    return r


def group_flash(path, group):
    """Flash (text + rodata + data) of one group of GROUPS, or of ALL."""
    v = sizes(path)[group]
    return v['text'] + v['rodata'] + v['data']


def firmware_flash(path):
    """Flash of every input section the linker kept."""
    return group_flash(path, ALL)


def package_flash(path):
    """Flash of the package's own groups (text + rodata + data)."""
    s = sizes(path)
    return sum(s[g][k] for g, _ in GROUPS if g.startswith('package') for k in ('text', 'rodata', 'data'))


if __name__ == '__main__':
    for w, v in rows(sys.argv[1]):
        print('%-70s %s' % (w, v))
